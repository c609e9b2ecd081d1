// A deterministic in-process cluster: N virtual nodes, each hosting the same
// protocol engine and sync services the runtime hosts, connected by a
// network whose delivery order is chosen by a seeded random generator.
// Messages between one pair of nodes stay in order (as over MPI); between
// different pairs they are delayed and reordered arbitrarily. A given seed
// always produces the same run.
#pragma once
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/stats.h"
#include "protocol/engine.h"
#include "sync/barrier_service.h"
#include "sync/lock_service.h"
#include "sync/reduce_service.h"
#include "sync/semaphore_service.h"
#include "sync/thread_barrier_service.h"
#include "sync/thread_reduce_service.h"

namespace agora {

class SimCluster;

class SimNode final : public EngineHost {
 public:
  SimNode(SimCluster &cluster, Rank rank, const std::string &protocol);
  Rank rank() const override { return rank_; }
  Rank nranks() const override;
  void send(Rank dst, MsgHeader header, Payload payload = {}) override;
  Stats &stats() override { return stats_; }
  size_t page_size() const override;
  void set_access(PageId page, Access access) override;
  std::byte *frame(PageId page) override { return &frames_[page * page_size()]; }
  Rank home_of(PageId page) const override;
  bool page_allocated(PageId) const override { return true; }
  bool sole_application_thread() const override;

  // What the application view of this node would allow (the simulated mprotect).
  Access access(PageId page) const { return access_[page]; }
  ProtocolEngine &engine() { return *engine_; }
  LockService &locks() { return locks_; }
  BarrierService &barrier() { return barrier_; }
  ReduceService &reduce() { return reduce_; }
  ThreadBarrierService &thread_barriers() { return thread_barriers_; }
  SemaphoreService &semaphores() { return semaphores_; }
  ThreadReduceService &thread_reductions() { return thread_reductions_; }
  // Thread barriers and semaphores are named by an address (here: a byte
  // offset into the simulated space, which may lie past its pages) and
  // managed by the home of its page, as the runtime's manager_of_key does.
  Rank manager_of(uint64_t object) const { return home_of(object / page_size()); }
  void deliver(const MsgHeader &m, Payload p);

 private:
  SimCluster &cluster_;
  Rank rank_;
  Stats stats_;
  std::vector<std::byte> frames_;
  std::vector<Access> access_;
  std::unique_ptr<ProtocolEngine> engine_;
  LockService locks_;
  BarrierService barrier_;
  ReduceService reduce_;
  ThreadBarrierService thread_barriers_;
  SemaphoreService semaphores_;
  ThreadReduceService thread_reductions_;
};

struct SimOptions {
  int nodes = 4;
  size_t pages = 8;
  size_t page_size = 64;  // tiny pages: more sharing, more races per step
  uint64_t seed = 1;
  std::string protocol = "sc";
  EngineOptions engine;
  // Fault injection, to show the testers catch broken coherence: the
  // simulated mprotect ignores every downgrade, as a buggy platform would.
  bool ignore_downgrades = false;
  // Application threads per node, when the program runs a fixed number
  // (0: unknown). With 1, nodes report sole_application_thread() as a rank
  // running one thread does (regc relies on it to drop entries sooner).
  int application_threads = 0;
};

class SimCluster {
 public:
  explicit SimCluster(const SimOptions &options);
  const SimOptions &options() const { return options_; }
  SimNode &node(Rank r) { return *nodes_[r]; }
  std::mt19937_64 &rng() { return rng_; }

  void post(Rank src, Rank dst, const MsgHeader &m, Payload p);
  // Delivers the oldest message of a randomly chosen non-empty channel.
  bool deliver_one();
  size_t in_flight() const { return in_flight_; }
  uint64_t delivered() const { return delivered_; }

 private:
  struct Packet {
    MsgHeader header;
    std::vector<std::byte> payload;
  };
  SimOptions options_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<SimNode>> nodes_;
  std::map<std::pair<Rank, Rank>, std::deque<Packet>> channels_;
  size_t in_flight_ = 0;
  uint64_t delivered_ = 0;
};

}  // namespace agora
