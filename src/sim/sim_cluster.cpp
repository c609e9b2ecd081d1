#include "sim/sim_cluster.h"

namespace agora {

SimCluster::SimCluster(const SimOptions &options) : options_(options), rng_(options.seed), network_(rng_) {
  for (Rank r = 0; r < options.nodes; ++r) nodes_.push_back(std::make_unique<SimNode>(*this, r));
}

bool SimCluster::deliver_one() {
  bool delivered =
      network_.deliver_one([this](Rank dst, const MsgHeader &m, Payload p) { nodes_[dst]->deliver(m, p); });
  if (delivered) evict_now();
  return delivered;
}

void SimCluster::evict_now() {
  // Between engine calls, as the runtime does: the cache bound, then (only
  // when asked for, so that other testers' seeds keep their runs) a copy
  // evicted at random.
  if (options_.cache_pages)
    for (auto &n : nodes_) n->trim_cache();
  if (options_.frames_move)
    for (auto &n : nodes_) n->take_unused_frames();
  if (options_.evict_chance > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < options_.evict_chance) {
    Rank r = (Rank)(rng_() % nodes_.size());
    nodes_[r]->evict_random(rng_());
  }
}

void SimCluster::tick_watches(double now) {
  for (auto &n : nodes_) n->watch().tick(now);
}

}  // namespace agora
