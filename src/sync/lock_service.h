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
// A lock passing between threads of one rank needs neither.
#pragma once
#include <deque>
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

  // Starts acquiring for `thread`; completes *w when granted.
  void acquire(uint64_t lock, uint64_t thread, Waiter *w);
  // Returns 0, or AGORA_ERR_NOT_HELD (-4) if `thread` does not hold `lock`.
  int release(uint64_t lock, uint64_t thread);
  void on_message(const MsgHeader &m, Payload p);

  Rank manager_of(uint64_t lock) const { return (Rank)(lock % (uint64_t)host_.nranks()); }

 private:
  enum Op : uint16_t { kRequest = 1, kGrant = 2, kRelease = 3, kHandOff = 4 };
  struct Requester {
    Rank rank;
    uint64_t token;                // the requester's Waiter, opaque to the manager
    std::vector<std::byte> view;   // the acquirer's view, for the protocol
  };
  struct Managed {
    bool held = false;
    Rank last_releaser = -1;
    std::deque<Requester> queue;
  };

  bool carries_consistency() const { return engine_ && engine_->carries_consistency(); }
  void manager_request(uint64_t lock, Requester r);
  void manager_release(uint64_t lock, Rank releaser);
  void grant(uint64_t lock, const Managed &l, Requester r);
  void hand_off(uint64_t lock, Requester r);
  void granted_here(uint64_t lock, uint64_t token, Payload info);

  ComponentHost &host_;
  ProtocolEngine *engine_ = nullptr;
  std::unordered_map<uint64_t, Managed> managed_;          // locks this rank manages
  std::unordered_map<uint64_t, uint64_t> holder_thread_;   // locks held on this rank -> thread
  std::unordered_map<uint64_t, uint64_t> pending_thread_;  // waiter token -> thread
};

}  // namespace agora
