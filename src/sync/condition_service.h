// Condition variables among threads on any ranks, named by their address in
// global memory and managed by the home rank of its page, which keeps a FIFO
// of waiters. A waiter enqueues (one round trip, completed before it
// releases its lock, so a signal sent by the next holder of the lock finds
// it queued), then releases the lock, waits for a wake and takes the lock
// again (the runtime does the lock steps). Signal wakes the oldest waiter,
// broadcast all of them; with no waiter they do nothing (POSIX). A waiter
// is woken only by a signal or broadcast, or by its own timeout: no spurious
// wakeups. Consistency comes from the lock, as POSIX specifies.
#pragma once
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>

#include "transport/message.h"

namespace agora {

class ConditionService {
 public:
  using ManagerOf = std::function<Rank(uint64_t object)>;
  ConditionService(ComponentHost &host, ManagerOf manager_of) : host_(host), manager_of_(std::move(manager_of)) {}

  // Enqueues a waiter: completes *queued once it is in the queue, and later
  // *woken with 0 (signalled) or 3 (AGORA_TIMEDOUT, after cancel()).
  void enqueue(uint64_t object, Waiter *woken, Waiter *queued);
  // A timed wait's deadline passed: if the waiter is still queued, it is
  // removed and woken with 3; if a signal already took it, its wake is on the
  // way (messages between two ranks stay in order) and wins.
  void cancel(uint64_t object, Waiter *woken);
  void signal(uint64_t object, bool all);
  void on_message(const MsgHeader &m, Payload p);
  Rank manager_of(uint64_t object) const { return manager_of_(object); }
  // For hang reports: condition variables managed here with waiters.
  std::string describe_contention() const;

 private:
  enum Op : uint16_t { kEnqueue = 1, kQueued = 2, kCancel = 3, kSignal = 4, kWake = 5 };
  struct Sleeper {
    Rank rank;
    uint64_t token;
  };
  void manage(Op op, uint64_t object, uint64_t b, uint64_t c, Rank from);
  void wake(Sleeper s, int status);
  void to(Rank rank, Op op, uint64_t object, uint64_t b, uint64_t c);

  ComponentHost &host_;
  ManagerOf manager_of_;
  std::unordered_map<uint64_t, std::deque<Sleeper>> waiting_;  // managed here
};

}  // namespace agora
