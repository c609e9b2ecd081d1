// Reductions among a team of threads on any ranks (Samhita/RegC's reduction
// extension, for fork-join threads): each of `count` threads contributes n
// values and every one gets the combination. A reduction object is named by
// its address in global memory and managed by the home rank of its page, as
// thread barriers are; but the manager works from messages only. init
// registers the team size with the manager, so neither a contribution nor
// the manager ever reads the object: no page fault, no lock.
//
// Determinism: the manager combines once, when the round is complete, in
// the order of the participants' job-wide thread ids (not their arrival
// order), and sends the same bytes to every participant.
//
// Consistency: none (like MPI_Allreduce); a barrier publishes memory.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sync/reduce_service.h"
#include "transport/message.h"

namespace agora {

class ThreadReduceService {
 public:
  using ManagerOf = std::function<Rank(uint64_t object)>;
  // Elements one contribution may have: its bytes travel in one message and
  // the manager keeps every contribution of a round.
  static constexpr size_t kMaxElements = size_t{1} << 20;

  // What a contribution says about itself; every participant of a round
  // must pass the same. valid = false: the caller's arguments were bad (too
  // many elements, unknown type or op); it still joins the round, so that
  // its team fails with it instead of waiting for it forever.
  struct Shape {
    uint64_t n = 0;
    ReduceType type = ReduceType::Int64;
    ReduceOp op = ReduceOp::Sum;
    bool valid = true;
    bool operator==(const Shape &o) const { return n == o.n && type == o.type && op == o.op && valid == o.valid; }
  };

  ThreadReduceService(ComponentHost &host, ManagerOf manager_of) : host_(host), manager_of_(std::move(manager_of)) {}

  // Every call completes *w with a status. init: AGORA_OK, or
  // AGORA_ERR_INVALID_ARGUMENT while a round is under way. destroy: AGORA_OK,
  // or AGORA_BUSY while a round is under way.
  void init(uint64_t object, uint32_t count, Waiter *w);
  void destroy(uint64_t object, Waiter *w);
  // Contributes data (shape.n elements, private memory: the result is
  // written there before *w completes, by whoever delivers the reply) as
  // thread `thread_id`. Completes *w with AGORA_OK; AGORA_ERR_MISUSE for
  // every participant of a round whose shapes differ; AGORA_ERR_INVALID_ARGUMENT for every
  // participant of a round with an invalid contribution, and at once if
  // the object was never initialised.
  void reduce(uint64_t object, uint64_t thread_id, Shape shape, void *data, Waiter *w);
  void on_message(const MsgHeader &m, Payload p);
  Rank manager_of(uint64_t object) const { return manager_of_(object); }
  // For hang reports: rounds managed here that are not complete.
  std::string describe_contention() const;

  // Mutation for the simulator tests only: combine in arrival order, as a
  // careless manager would (participants still agree, but a rerun differs).
  void combine_in_arrival_order_for_testing(bool on) { arrival_order_ = on; }

  static uint64_t encode(Shape s);
  static Shape decode(uint64_t bits);
  static std::string describe(Shape s);  // "3 x double sum"

 private:
  enum Op : uint16_t { kInit = 1, kDestroy = 2, kContribute = 3, kReply = 4, kResult = 5 };
  struct Contribution {
    Rank rank;
    uint64_t token;
    uint64_t thread_id;
    Shape shape;
    std::vector<std::byte> data;
  };
  struct Reduction {
    uint32_t count = 0;  // 0: not initialised (or destroyed)
    std::vector<Contribution> round;
  };
  struct Pending {
    void *data;
    size_t bytes;
  };
  void request(uint64_t object, Op op, uint64_t arg, uint64_t token);
  void manage(Op op, uint64_t object, uint64_t arg, Rank from, uint64_t token);
  void contribute(uint64_t object, Contribution c);
  void complete_round(uint64_t object, std::vector<Contribution> round);
  int check_round(uint64_t object, const std::vector<Contribution> &round) const;
  void reply(Rank to, uint64_t token, int status, Payload result = {});
  void replied_here(uint64_t token, int status, Payload result);

  ComponentHost &host_;
  ManagerOf manager_of_;
  bool arrival_order_ = false;
  std::unordered_map<uint64_t, Reduction> reductions_;  // managed here
  std::unordered_map<uint64_t, Pending> pending_;       // this rank's callers, by token
};

}  // namespace agora
