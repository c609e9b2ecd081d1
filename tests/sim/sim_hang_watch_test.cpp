// The hang watch hosted by simulated nodes: its reports and probe waves are
// messages of the seeded network (Channel::Watch, kept out of the counts the
// proof compares), its clock the simulated seconds the test ticks it with,
// the message counts it compares each node's own. Two threads on different
// nodes take two locks in opposite orders: the watch must prove the deadlock
// and end the run, whatever order the seed delivers its messages in. If the
// second thread only holds its lock and computes, there is no deadlock: the
// watch must not end the run, and warns once the first has waited long.
#include <gtest/gtest.h>

#include "sim/sim_cluster.h"

using namespace agora;

namespace {

struct LockOrder {
  SimCluster cluster;
  Waiter first_a, first_b, second_a, second_b;
  Rank a, b;

  LockOrder(uint64_t seed, int nodes) : cluster(options(seed, nodes)), a(0), b(nodes - 1) {}
  static SimOptions options(uint64_t seed, int nodes) {
    SimOptions o;
    o.protocol = "hlrc";
    o.seed = seed;
    o.nodes = nodes;
    o.watch.period = 0.5;
    o.watch.warn_after = 4;
    return o;
  }
  void settle() {
    while (cluster.deliver_one()) {
    }
  }
  // Thread 1 (node a) holds lock 1, thread 2 (node b) holds lock 2; then
  // thread 1 asks for lock 2 and, if crossing, thread 2 for lock 1.
  void run(bool crossing) {
    cluster.node(a).locks().acquire(1, 1, &first_a);
    cluster.node(b).locks().acquire(2, 2, &first_b);
    settle();
    ASSERT_TRUE(first_a.done() && first_b.done());
    cluster.node(a).locks().acquire(2, 1, &second_a);
    if (crossing) cluster.node(b).locks().acquire(1, 2, &second_b);
    settle();
    ASSERT_FALSE(second_a.done());
    // What each node tells the watch: node a's thread (and b's, when
    // crossing) waits in agora_lock; every other node's main waits in finalize.
    for (Rank r = 0; r < cluster.options().nodes; ++r) {
      cluster.node(r).set_hang_state([this, r, crossing] {
        RankState s;
        bool computing = r == b && !crossing;
        s.blocked = !computing;
        s.waited_s = computing ? 0 : now;
        s.outside_s = computing ? now : 0;
        s.waits = r == a ? "agora_lock(lock 2)\n" : r == b ? "agora_lock(lock 1)\n" : "agora_finalize\n";
        return s;
      });
    }
    for (now = 0; now < 12; now += 0.1) {
      cluster.tick_watches(now);
      settle();
    }
  }
  double now = 0;
};

}  // namespace

TEST(SimHangWatch, ProvesALockOrderDeadlockOverSeeds) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    int nodes = 2 + (int)(seed % 3);
    EXPECT_EXIT(LockOrder(seed, nodes).run(true), testing::ExitedWithCode(1), "deadlock detected") << "seed " << seed;
  }
}

TEST(SimHangWatch, NoDeadlockWhileAThreadComputesButAWarning) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    LockOrder run(seed, 2 + (int)(seed % 3));
    testing::internal::CaptureStderr();
    run.run(false);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("has been outside Agora"), std::string::npos) << "seed " << seed << ": " << err;
    EXPECT_EQ(err.find("deadlock"), std::string::npos) << err;
  }
}
