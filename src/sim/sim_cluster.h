// A deterministic in-process cluster: N virtual nodes (sim_node.h), each
// hosting the same protocol engine and services the runtime hosts,
// connected by a network (sim_network.h) whose delivery order is chosen by a
// seeded random generator. A given seed always produces the same run.
#pragma once
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "sim/sim_network.h"
#include "sim/sim_node.h"
#include "sim/sim_options.h"

namespace agora {

class SimCluster {
 public:
  explicit SimCluster(const SimOptions &options);
  const SimOptions &options() const { return options_; }
  SimNode &node(Rank r) { return *nodes_[r]; }
  std::mt19937_64 &rng() { return rng_; }

  void post(Rank src, Rank dst, const MsgHeader &m, Payload p) {
    if (observe_post_) observe_post_(src, dst, m);
    network_.post(src, dst, m, p);
  }
  // Testers: see every message as it is sent (e.g. to count a protocol's ops).
  using PostObserver = std::function<void(Rank src, Rank dst, const MsgHeader &m)>;
  void observe_posts(PostObserver observer) { observe_post_ = std::move(observer); }
  // Steps delivered one at a time, in order, reorderable with everything else.
  void post_steps(std::deque<std::function<void()>> steps) { network_.post_steps(std::move(steps)); }
  // Delivers the oldest message of a randomly chosen non-empty channel.
  bool deliver_one();
  size_t in_flight() const { return network_.in_flight(); }
  void set_slow_pair(Rank src, Rank dst) { network_.set_slow_pair(src, dst); }
  size_t slow_in_flight() const { return network_.slow_in_flight(); }
  uint64_t delivered() const { return network_.delivered(); }
  // The bounded cache: every node within its bound, then perhaps one random
  // eviction (SimOptions::cache_pages, evict_chance). After every delivery.
  void evict_now();
  // Ticks every node's hang watch at simulated time `now` (seconds).
  void tick_watches(double now);

 private:
  SimOptions options_;
  std::mt19937_64 rng_;
  SimNetwork network_;
  std::vector<std::unique_ptr<SimNode>> nodes_;
  PostObserver observe_post_;
};

}  // namespace agora
