// Barriers among any set of threads, on any ranks (pthread_barrier
// semantics): a barrier is named by its address in global memory and
// managed by the home rank of that address's page (locality, and no table to
// agree on). Each waiter sends one arrival to the manager; when `count` have
// arrived the manager releases them all, the last arriver with
// AGORA_BARRIER_SERIAL. The object is reusable: the next round starts when
// the manager has released this one.
//
// Consistency: a barrier is a release and an acquire for every participant.
// A waiter first publishes its rank's writes (engine release) and sends its
// release info with the arrival; the manager keeps the newest info per rank
// and hands every participant the others' (ReleaseBundles), as
// agora_barrier's rounds do across ranks.
#pragma once
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/engine.h"
#include "sync/release_bundles.h"
#include "transport/message.h"

namespace agora {

class ThreadBarrierService {
 public:
  using ManagerOf = std::function<Rank(uint64_t object)>;
  ThreadBarrierService(ComponentHost &host, ManagerOf manager_of) : host_(host), manager_of_(std::move(manager_of)) {}
  void attach(ProtocolEngine *engine) { engine_ = engine; }

  // Arrives at barrier `object` of `count` threads; completes *w with 0, or
  // 1 (AGORA_BARRIER_SERIAL) for one waiter of the round. Waiters of one
  // round passing different counts end the job (fatal, naming both).
  void wait(uint64_t object, uint32_t count, Waiter *w);
  void on_message(const MsgHeader &m, Payload p);
  Rank manager_of(uint64_t object) const { return manager_of_(object); }
  // For hang reports: rounds managed here that are not complete.
  std::string describe_contention() const;

 private:
  enum Op : uint16_t { kArrive = 1, kDepart = 2 };
  struct Arrival {
    Rank rank;
    uint64_t token;
  };
  struct Round {
    uint32_t count = 0;
    Rank first_rank = -1;
    std::vector<Arrival> arrived;
    ReleaseBundles infos;
  };
  bool carries_consistency() const { return engine_ && engine_->carries_consistency(); }
  void send_arrival(uint64_t object, uint32_t count, uint64_t token);
  void manager_arrive(uint64_t object, uint32_t count, Arrival a, Payload info);
  void departed_here(uint64_t token, int status, Payload infos);

  ComponentHost &host_;
  ManagerOf manager_of_;
  ProtocolEngine *engine_ = nullptr;
  std::unordered_map<uint64_t, Round> rounds_;  // barriers managed here, current round
};

}  // namespace agora
