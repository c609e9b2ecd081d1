#include "sim/sim_cluster.h"

namespace agora {

SimCluster::SimCluster(const SimOptions &options) : options_(options), rng_(options.seed), network_(rng_) {
  for (Rank r = 0; r < options.nodes; ++r) nodes_.push_back(std::make_unique<SimNode>(*this, r));
}

bool SimCluster::deliver_one() {
  return network_.deliver_one([this](Rank dst, const MsgHeader &m, Payload p) { nodes_[dst]->deliver(m, p); });
}

void SimCluster::tick_watches(double now) {
  for (auto &n : nodes_) n->watch().tick(now);
}

}  // namespace agora
