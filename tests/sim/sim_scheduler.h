// The scheduler shared by the simulator testers (sim_program, sim_regc_program):
// it interleaves steps of virtual threads with message deliveries, all chosen
// by the cluster's seed, and the node-level barrier every thread of a node
// gathers at before the node enters the BarrierService.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "sim/sim_cluster.h"

namespace agora::simtest {

// What one visit of a thread to a node-level barrier did.
enum class BarrierStep {
  Passed,      // the barrier is over for this thread: go on to the next op
  Progressed,  // the node entered the BarrierService: the step counts as progress
  Blocked,     // waiting for the node's other threads or for the barrier
};

// The node's side of a barrier: its threads gather, the last one enters the
// node's BarrierService, and all leave when it completes.
struct NodeBarrier {
  int arrived = 0;
  bool entered = false;  // the node's barrier service has been entered
  Waiter waiter;
  uint64_t generation = 0;
};

// A thread's side of a barrier.
struct BarrierVisit {
  bool at_barrier = false;
  uint64_t generation = 0;
};

BarrierStep node_barrier_step(SimNode &node, NodeBarrier &nb, BarrierVisit &visit, int threads_per_node);

struct Schedule {
  size_t threads = 0;
  // Steps thread i; false if it could not make progress (blocked or done).
  std::function<bool(size_t)> step;
  std::function<bool(size_t)> finished;
  // False once a step has recorded a failure: the run stops.
  std::function<bool()> ok;
  // Records a scheduler failure (livelock, deadlock).
  std::function<void(const std::string &)> fail;
  // Called after every delivery or step (e.g. to time-stamp lock grants).
  std::function<void()> after_action;
  uint64_t max_steps = 2'000'000;
};

// Runs until every thread has finished or a failure; counts loop turns in *steps.
void run_schedule(SimCluster &cluster, const Schedule &s, uint64_t *steps);

}  // namespace agora::simtest
