// FIFO-fair distributed locks. Each lock has a manager rank (id mod N) that
// keeps who holds it and a queue of waiting (rank, thread) requests; a release
// hands the lock to the head of the queue. Acquire costs one round trip to the
// manager (none if local); release is one one-way message.
//
// Under a protocol that carries consistency (hlrc), the lock also moves the
// write notices: a request carries the acquirer's view, and when the lock
// passes to a rank other than its last releaser, the manager asks that
// releaser to publish its writes and grant the lock itself, with the notices
// the acquirer lacks (one extra message unless the manager is the releaser).
// A lock passing between threads of one rank needs neither. Every acquire
// and release is also a span boundary for the protocol (span_begin as the
// request leaves, the acquire completing once the lock is granted and the
// protocol is ready; span_end before the release leaves): regc needs them.
//
// Lock ids are handed out in creation order, so ranks that create different
// numbers of locks would silently use different ids for "the same" lock. A
// request carries the signature of the lock as the requester created it
// (creation call and position, 0 if unknown); the manager compares it with
// its own and with other requesters' and ends the job if they differ.
#pragma once
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/engine.h"
#include "transport/message.h"

namespace agora {

class LockService {
 public:
  explicit LockService(ComponentHost &host) : host_(host) {}
  // The protocol whose sync hooks locks call (may be null: plain locks).
  void attach(ProtocolEngine *engine) { engine_ = engine; }

  // Signature of a lock as this rank created it (0: unknown / not checked).
  using Signatures = std::function<uint64_t(uint64_t lock)>;
  void set_signatures(Signatures s) { signatures_ = std::move(s); }

  // Which rank manages a lock (default: id mod N). The runtime names
  // address-named locks by their address and manages them at its page's home.
  using Managers = std::function<Rank(uint64_t lock)>;
  void set_managers(Managers m) { managers_ = std::move(m); }

  // Starts acquiring for `thread`; completes *w when granted. Returns -8
  // (AGORA_ERR_DEADLOCK), without waiting, if `thread` already holds it.
  // With `try_only`, a lock held elsewhere completes *w with 2 (AGORA_BUSY)
  // instead of queueing (and one this thread holds returns 2 at once).
  int acquire(uint64_t lock, uint64_t thread, Waiter *w, bool try_only = false);
  bool holds(uint64_t lock, uint64_t thread) const {
    auto it = holder_thread_.find(lock);
    return it != holder_thread_.end() && it->second == thread;
  }
  // For hang reports: locks managed here that threads wait for, one line each.
  std::string describe_contention() const;
  // Returns AGORA_OK, or AGORA_ERR_NOT_HELD if `thread` does not hold `lock`.
  // `stores`: the bytes the thread stored in the span, if store tracing found them.
  int release(uint64_t lock, uint64_t thread, const std::vector<StoreRange> *stores = nullptr);
  // Ends a lock: its manager drops its record (holder, queue, last
  // releaser, signature). Completes *w with AGORA_OK, or with
  // AGORA_ERR_MISUSE (the record kept) if a thread holds or waits for it.
  // Returns AGORA_ERR_MISUSE without asking if a thread of this rank holds it.
  // A record that says another rank holds the lock may only lag behind a
  // release still on its way (after a barrier, say): the manager then asks
  // that rank, and decides on its record once the answer is back, which
  // comes after any release that rank sent before it.
  int destroy(uint64_t lock, Waiter *w);
  void on_message(const MsgHeader &m, Payload p);

  Rank manager_of(uint64_t lock) const { return managers_ ? managers_(lock) : (Rank)(lock % (uint64_t)host_.nranks()); }

 private:
  enum Op : uint16_t {
    kRequest = 1,
    kGrant = 2,
    kRelease = 3,
    kHandOff = 4,
    kTryRequest = 5,
    kBusy = 6,
    kDestroy = 7,
    kDestroyed = 8,
    kHolderQuery = 9,
    kHolderAnswer = 10
  };
  struct Requester {
    Rank rank;
    uint64_t token;               // the requester's Waiter, opaque to the manager
    std::vector<std::byte> view;  // the acquirer's view, for the protocol
  };
  struct Managed {
    bool held = false;
    Rank holder = -1;
    Rank last_releaser = -1;
    uint64_t signature = 0;  // first known signature, and the rank it came from
    Rank signer = -1;
    std::deque<Requester> queue;
  };

  bool carries_consistency() const { return engine_ && engine_->carries_consistency(); }
  void manager_request(uint64_t lock, Requester r, uint64_t signature, bool try_only = false);
  void busy_here(uint64_t token);
  void check_signature(uint64_t lock, Managed &l, Rank from, uint64_t signature);
  void manager_release(uint64_t lock, Rank releaser);
  // asked_holder: the holder's rank has answered a query sent after the
  // destroy arrived, so a release it sent before is in (pairs are FIFO).
  void manager_destroy(uint64_t lock, Rank from, uint64_t token, bool asked_holder);
  void grant(uint64_t lock, const Managed &l, Requester r);
  void hand_off(uint64_t lock, Requester r);
  void granted_here(uint64_t lock, uint64_t token, Payload info);
  // The protocol is ready for the span of waiter `token` (span_begin).
  void span_ready(uint64_t token);

  ComponentHost &host_;
  ProtocolEngine *engine_ = nullptr;
  Signatures signatures_;
  Managers managers_;
  std::unordered_map<uint64_t, Managed> managed_;          // locks this rank manages
  std::unordered_map<uint64_t, uint64_t> holder_thread_;   // locks held on this rank -> thread
  std::unordered_map<uint64_t, uint64_t> pending_thread_;  // waiter token -> thread
  // Acquires whose grant and protocol readiness are not both in yet.
  struct Starting {
    bool granted = false;
    bool ready = false;
    uint64_t lock = 0;            // once granted: the lock ...
    std::vector<std::byte> info;  // ... and what its grant carried
  };
  std::unordered_map<uint64_t, Starting> starting_;  // waiter token -> progress
};

}  // namespace agora
