// Counting semaphores among threads on any ranks, named by their address in
// global memory and managed by the home rank of its page. The manager keeps
// the count and a FIFO of waiters; every operation is one round trip to it
// (none if local), so a thread's operations take effect in program order.
//
// Consistency: a post is a release (the poster publishes its rank's writes
// and sends its release info, kept by the manager, newest per rank) and the
// wait it satisfies an acquire (it gets the kept infos of other ranks).
#pragma once
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>

#include "protocol/engine.h"
#include "sync/release_bundles.h"
#include "transport/message.h"

namespace agora {

class SemaphoreService {
 public:
  using ManagerOf = std::function<Rank(uint64_t object)>;
  static constexpr uint64_t kMaxValue = 0x7fffffff;  // SEM_VALUE_MAX

  SemaphoreService(ComponentHost &host, ManagerOf manager_of) : host_(host), manager_of_(std::move(manager_of)) {}
  void attach(ProtocolEngine *engine) { engine_ = engine; }

  // Each completes *w with a status: AGORA_OK, AGORA_BUSY (trywait with
  // count 0; destroy with waiters), or AGORA_ERR_INVALID_ARGUMENT (post beyond
  // kMaxValue; init while threads wait). get_value also sets *value before completing.
  void init(uint64_t object, uint64_t value, Waiter *w);
  void wait(uint64_t object, bool try_only, Waiter *w);
  void post(uint64_t object, Waiter *w);
  void get_value(uint64_t object, int64_t *value, Waiter *w);
  void destroy(uint64_t object, Waiter *w);
  void on_message(const MsgHeader &m, Payload p);
  Rank manager_of(uint64_t object) const { return manager_of_(object); }
  std::string describe_contention() const;  // semaphores managed here with waiters

 private:
  enum Op : uint16_t { kInit = 1, kWait = 2, kTryWait = 3, kPost = 4, kGetValue = 5, kDestroy = 6, kReply = 7 };
  struct Requester {
    Rank rank;
    uint64_t token;
  };
  struct Sem {
    uint64_t value = 0;  // zero-filled semaphores start at 0
    std::deque<Requester> waiting;
    ReleaseBundles infos;
  };
  bool carries_consistency() const { return engine_ && engine_->carries_consistency(); }
  void request(uint64_t object, Op op, uint64_t arg, uint64_t token, Payload info = {});
  void manage(Op op, uint64_t object, uint64_t arg, Requester r, Payload info);
  void reply(Requester r, int64_t status, uint64_t result, Payload infos = {});
  void grant(Sem &s, Requester r);
  void replied_here(uint64_t token, int64_t status, uint64_t result, Payload infos);

  ComponentHost &host_;
  ManagerOf manager_of_;
  ProtocolEngine *engine_ = nullptr;
  std::unordered_map<uint64_t, Sem> sems_;             // managed here
  std::unordered_map<uint64_t, int64_t *> value_out_;  // get_value token -> where to store
  std::unordered_map<uint64_t, bool> acquiring_;       // wait tokens (apply infos on grant)
};

}  // namespace agora
