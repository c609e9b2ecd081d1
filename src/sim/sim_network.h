// The simulator's network: one FIFO channel per ordered pair of nodes (as
// over MPI, messages between one pair stay in order), and a delivery order
// across channels chosen by the cluster's seeded generator. A given seed
// always produces the same order. With reorder_pairs, messages of one pair
// overtake each other too (the unordered networks of Themis, which the
// global-pointer schemes must survive): any message in flight may be next.
#pragma once
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "transport/message.h"

namespace agora {

class SimNetwork {
 public:
  explicit SimNetwork(std::mt19937_64 &rng) : rng_(rng) {}

  // Copies the message into the (src, dst) channel.
  void post(Rank src, Rank dst, const MsgHeader &m, Payload p);
  using Deliver = std::function<void(Rank dst, const MsgHeader &m, Payload p)>;
  // Hands the oldest message of a randomly chosen non-empty channel to
  // deliver; false if nothing is in flight.
  bool deliver_one(const Deliver &deliver);
  // Steps run one per delivery, in order, in a channel of their own (a
  // one-sided read: snapshots at moments apart, reorderable with every
  // message and every other sequence).
  void post_steps(std::deque<std::function<void()>> steps);
  void set_reorder_pairs(bool on) { reorder_pairs_ = on; }
  // A slow link: messages from src to dst wait while any other channel has
  // one (but for one pick in 16), so they arrive after later messages of
  // other pairs (sim_flush_test: a change notice overtaken).
  void set_slow_pair(Rank src, Rank dst) { slow_pair_ = {src, dst}; }
  // Messages waiting on the slow link (a tester may step threads instead of
  // delivering while they are all that is in flight).
  size_t slow_in_flight() const {
    auto it = channels_.find(slow_pair_);
    return it == channels_.end() ? 0 : it->second.size();
  }
  size_t in_flight() const { return in_flight_; }
  uint64_t delivered() const { return delivered_; }  // messages only

 private:
  struct Packet {
    MsgHeader header;
    std::vector<std::byte> payload;
  };
  std::mt19937_64 &rng_;
  bool reorder_pairs_ = false;
  std::pair<Rank, Rank> slow_pair_{-1, -1};
  std::vector<std::pair<Rank, Packet>> loose_;  // reorder_pairs: (destination, message), any order
  std::map<std::pair<Rank, Rank>, std::deque<Packet>> channels_;
  std::map<uint64_t, std::deque<std::function<void()>>> sequences_;  // none empty
  uint64_t next_sequence_ = 0;
  size_t in_flight_ = 0;  // messages and steps
  uint64_t delivered_ = 0;
};

}  // namespace agora
