// The hang watch's proof of deadlock and its warnings, driven by hand over a
// tiny in-process network: each rank's state is set by the test, messages
// are delivered when the test says.
#include "sync/hang_watch.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>

#include "common/stats.h"

namespace agora {
namespace {

struct Net;

struct Node final : ComponentHost {
  Node(Net &net, Rank rank) : net(net), me(rank) {}
  Rank rank() const override { return me; }
  Rank nranks() const override;
  void send(Rank dst, MsgHeader header, Payload payload) override;
  Stats &stats() override { return counters; }
  Net &net;
  Rank me;
  Stats counters;
  RankState state;       // what the host reports
  bool busy = false;     // exchanges a message between any two snapshots
  bool stopped = false;  // never runs (SIGSTOP): no ticks, no messages handled
  std::unique_ptr<HangWatch> watch;
};

struct Net {
  struct Msg {
    Rank dst;
    MsgHeader header;
    std::vector<std::byte> payload;
  };
  explicit Net(int n, HangWatch::Options options = {}) {
    for (Rank r = 0; r < n; ++r) {
      nodes.push_back(std::make_unique<Node>(*this, r));
      Node *node = nodes.back().get();
      node->watch = std::make_unique<HangWatch>(*node, options, [node] {
        if (node->busy) node->state.sent++, node->state.received++;
        return node->state;
      });
    }
  }
  // Ticks every rank at `now`, then delivers every message (and the
  // messages those cause).
  void step(double now) {
    for (auto &n : nodes)
      if (!n->stopped) n->watch->tick(now);
    while (!queue.empty()) {
      Msg m = std::move(queue.front());
      queue.pop_front();
      if (!nodes[m.dst]->stopped) nodes[m.dst]->watch->on_message(m.header, {m.payload.data(), m.payload.size()});
    }
  }
  void block_all(uint64_t sent, uint64_t received) {
    for (auto &n : nodes) n->state = {true, 5, 0, sent, received, "agora_lock(lock 1)\n"};
  }
  std::vector<std::unique_ptr<Node>> nodes;
  std::deque<Msg> queue;
};

Rank Node::nranks() const { return (Rank)net.nodes.size(); }
void Node::send(Rank dst, MsgHeader header, Payload payload) {
  header.src = me;
  net.queue.push_back({dst, header, std::vector<std::byte>(payload.data, payload.data + payload.size)});
}

void three_ranks_blocked() {
  Net net(3);
  net.block_all(7, 7);
  for (double t = 0; t < 5; t += 0.1) net.step(t);
}

TEST(HangWatch, ProvesADeadlockWhenEveryRankStaysBlockedWithNothingInFlight) {
  EXPECT_EXIT(three_ranks_blocked(), testing::ExitedWithCode(1), "deadlock: every rank is blocked.*rank 2: agora_lock");
}

TEST(HangWatch, NoDeadlockWhileAMessageIsInFlight) {
  Net net(2);
  net.block_all(7, 7);
  net.nodes[0]->state.sent = 8;  // one message of rank 0 not yet received
  for (double t = 0; t < 5; t += 0.1) net.step(t);
  SUCCEED();
}

TEST(HangWatch, NoDeadlockWhenARankMovedBetweenTheWaves) {
  Net net(2);
  net.block_all(3, 3);
  // Every rank reports blocked, but rank 1 exchanges a message between any
  // two looks at it (it was woken in between): no proof.
  net.nodes[1]->busy = true;
  for (double t = 0; t < 5; t += 0.1) net.step(t);
  SUCCEED();
}

TEST(HangWatch, NoDeadlockWhileOneRankRuns) {
  Net net(2);
  net.block_all(3, 3);
  net.nodes[1]->state = {false, 0, 30, 3, 3, ""};
  for (double t = 0; t < 5; t += 0.1) net.step(t);
  SUCCEED();
}

void rank_1_stays_outside(double timeout) {
  HangWatch::Options options;
  options.warn_after = 1;
  options.timeout = timeout;
  Net net(2, options);
  for (double t = 0; t < 10; t += 0.1) {
    net.nodes[0]->state = {true, t, 0, 1, 1, "agora_barrier (collective call #4)\n"};
    net.nodes[1]->state = {false, 0, t, 1, 1, ""};
    net.step(t);
  }
}

TEST(HangWatch, TimeoutEndsAJobWaitingForARankThatStaysOutside) {
  EXPECT_EXIT(rank_1_stays_outside(3), testing::ExitedWithCode(1),
              "rank 1 has been outside Agora.*no progress for 3 s");
}

TEST(HangWatch, WarnsButDoesNotEndWithoutATimeout) {
  testing::internal::CaptureStderr();
  rank_1_stays_outside(0);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("rank 1 has been outside Agora"), std::string::npos) << err;
}

void rank_1_stopped_from_the_start() {
  HangWatch::Options options;
  options.warn_after = 2;
  options.timeout = 4;
  Net net(2, options);
  net.nodes[1]->stopped = true;
  // The clock does not start at 0: silence is counted from the watch's start.
  for (double t = 1000; t < 1010; t += 0.1) {
    net.nodes[0]->state = {true, t - 1000, 0, 1, 1, "agora_barrier (collective call #4)\n"};
    net.step(t);
  }
}

TEST(HangWatch, ARankNeverHeardFromIsNamedWithTheTimeSinceTheStart) {
  EXPECT_EXIT(rank_1_stopped_from_the_start(), testing::ExitedWithCode(1),
              "rank 1 has not been heard from for 4 s.*no progress for 4 s");
}

}  // namespace
}  // namespace agora
