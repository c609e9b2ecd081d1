// A simulated cluster for the global-pointer schemes: N nodes, each with its
// segment and its engine, over the simulator's network (optionally
// reordering one pair's messages, as Themis's network did). The tester
// drives it: issues accesses, delivers messages one at a time in the
// seed's order, and models barriers as drain-then-acquire on every node.
#pragma once
#include <memory>
#include <random>
#include <vector>

#include "common/stats.h"
#include "gptr/gptr_engine.h"
#include "sim/sim_network.h"

namespace agora {

struct SimGptrOptions {
  int nodes = 3;
  uint64_t segment_bytes = 1024;  // allocated (the extent) on every node
  uint64_t seed = 1;
  bool reorder_pairs = true;
  gptr::Options gptr;
};

class SimGptrCluster {
 public:
  explicit SimGptrCluster(const SimGptrOptions &options);
  gptr::Engine &engine(Rank node) { return *nodes_[node]->engine; }
  std::byte *segment(Rank node) { return nodes_[node]->memory.data(); }
  std::mt19937_64 &rng() { return rng_; }
  // Delivers one message; false if none is in flight.
  bool deliver_one();
  size_t in_flight() const { return network_.in_flight(); }
  uint64_t delivered() const { return network_.delivered(); }

 private:
  struct Node final : gptr::Host {
    SimGptrCluster *cluster = nullptr;
    Rank id = 0;
    std::vector<std::byte> memory;
    Stats node_stats;
    std::unique_ptr<gptr::Engine> engine;
    Rank rank() const override { return id; }
    Rank nranks() const override { return (Rank)cluster->nodes_.size(); }
    void send(Rank dst, MsgHeader header, Payload payload) override {
      header.src = id;
      cluster->network_.post(id, dst, header, payload);
    }
    Stats &stats() override { return node_stats; }
    std::byte *segment() override { return memory.data(); }
    uint64_t extent() const override { return memory.size(); }
  };
  std::mt19937_64 rng_;
  bool trace_ = false;  // AGORA_SIM_TRACE: print every delivery
  SimNetwork network_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

}  // namespace agora
