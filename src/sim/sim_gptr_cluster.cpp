#include "sim/sim_gptr_cluster.h"

#include <cstdio>
#include <cstdlib>

namespace agora {

SimGptrCluster::SimGptrCluster(const SimGptrOptions &options) : rng_(options.seed), network_(rng_) {
  network_.set_reorder_pairs(options.reorder_pairs);
  trace_ = std::getenv("AGORA_SIM_TRACE") != nullptr;
  for (int i = 0; i < options.nodes; ++i) {
    auto node = std::make_unique<Node>();
    node->cluster = this;
    node->id = i;
    node->memory.assign(options.segment_bytes, std::byte{0});
    nodes_.push_back(std::move(node));
  }
  for (auto &node : nodes_) node->engine = gptr::make_engine(*node, options.gptr);
}

bool SimGptrCluster::deliver_one() {
  return network_.deliver_one([this](Rank dst, const MsgHeader &m, Payload p) {
    if (trace_)
      std::printf("  msg %u %d->%d a=%llu b=%llx c=%llx size %zu\n", m.op, m.src, dst, (unsigned long long)m.a,
                  (unsigned long long)m.b, (unsigned long long)m.c, p.size);
    nodes_[dst]->engine->on_message(m, p);
  });
}

}  // namespace agora
