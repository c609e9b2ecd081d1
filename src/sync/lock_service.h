// FIFO-fair distributed locks. Each lock has a manager rank (id mod N) that
// keeps who holds it and a queue of waiting (rank, thread) requests; a release
// hands the lock to the head of the queue. Acquire costs one round trip to the
// manager (none if local); release is one one-way message.
#pragma once
#include <deque>
#include <unordered_map>

#include "transport/message.h"

namespace agora {

class LockService {
 public:
  explicit LockService(ComponentHost &host) : host_(host) {}

  // Starts acquiring for `thread`; completes *w when granted.
  void acquire(uint64_t lock, uint64_t thread, Waiter *w);
  // Returns 0, or AGORA_ERR_NOT_HELD (-4) if `thread` does not hold `lock`.
  int release(uint64_t lock, uint64_t thread);
  void on_message(const MsgHeader &m);

  Rank manager_of(uint64_t lock) const { return (Rank)(lock % (uint64_t)host_.nranks()); }

 private:
  enum Op : uint16_t { kRequest = 1, kGrant = 2, kRelease = 3 };
  struct Requester {
    Rank rank;
    uint64_t token;  // the requester's Waiter, opaque to the manager
  };
  struct Managed {
    bool held = false;
    std::deque<Requester> queue;
  };

  void manager_request(uint64_t lock, Requester r);
  void manager_release(uint64_t lock);
  void grant(uint64_t lock, Requester r);
  void granted_here(uint64_t lock, uint64_t token);

  ComponentHost &host_;
  std::unordered_map<uint64_t, Managed> managed_;          // locks this rank manages
  std::unordered_map<uint64_t, uint64_t> holder_thread_;   // locks held on this rank -> thread
  std::unordered_map<uint64_t, uint64_t> pending_thread_;  // waiter token -> thread
};

}  // namespace agora
