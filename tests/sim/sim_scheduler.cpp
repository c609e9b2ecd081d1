#include "sim/sim_scheduler.h"

namespace agora::simtest {

BarrierStep node_barrier_step(SimNode &node, NodeBarrier &nb, BarrierVisit &visit, int threads_per_node) {
  if (!visit.at_barrier) {
    visit.at_barrier = true;
    visit.generation = nb.generation;
    nb.arrived++;
  }
  if (nb.generation != visit.generation) {  // released
    visit.at_barrier = false;
    return BarrierStep::Passed;
  }
  if (nb.arrived == threads_per_node && !nb.entered) {
    nb.entered = true;
    nb.waiter.reset();
    node.barrier().arrive(&nb.waiter);
    return BarrierStep::Progressed;
  }
  if (nb.entered && nb.waiter.done()) {
    nb.entered = false;
    nb.arrived = 0;
    nb.generation++;
    visit.at_barrier = false;
    return BarrierStep::Passed;
  }
  return BarrierStep::Blocked;
}

void run_schedule(SimCluster &cluster, const Schedule &s, uint64_t *steps) {
  auto &rng = cluster.rng();
  auto after = [&] {
    if (s.after_action) s.after_action();
  };
  while (s.ok()) {
    bool all_done = true;
    for (size_t i = 0; i < s.threads; ++i) all_done &= s.finished(i);
    if (all_done) break;
    if (++*steps > s.max_steps) {
      s.fail("no completion after " + std::to_string(s.max_steps) + " steps (livelock?)");
      break;
    }
    // Half the time deliver a message, half the time step a random thread;
    // fall back to the other when one has nothing to do.
    bool progressed = false;
    if (cluster.in_flight() && rng() % 2 == 0) progressed = cluster.deliver_one();
    if (progressed) after();
    if (!progressed) {
      size_t start = rng() % s.threads;
      for (size_t k = 0; k < s.threads && !progressed && s.ok(); ++k) {
        progressed = s.step((start + k) % s.threads);
        after();
      }
    }
    if (!progressed && s.ok()) {
      progressed = cluster.deliver_one();
      if (progressed) after();
    }
    if (!progressed && s.ok()) s.fail("deadlock: no thread can run and no message is in flight");
  }
}

}  // namespace agora::simtest
