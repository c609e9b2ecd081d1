// Lock and barrier services (src/sync) on fake ranks: a lock passes in
// request order, a barrier completes only when every rank arrived; their
// invariants (AGORA_CHECKS) fire on a release by a rank that does not hold
// the lock and on a barrier signal for an epoch already finished.
#include <gtest/gtest.h>

#include <deque>
#include <memory>

#include "common/stats.h"
#include "sync/atomic_service.h"
#include "sync/barrier_service.h"
#include "sync/lock_service.h"
#include "sync/spin_backoff.h"
#include "sync/trylock_spin.h"

namespace agora {
namespace {

struct Node final : ComponentHost {
  struct Msg {
    Rank dst;
    MsgHeader h;
    std::vector<std::byte> p;
  };
  Node(std::deque<Msg> *q, Rank r, Rank n) : q(q), me(r), n(n) {}
  Rank rank() const override { return me; }
  Rank nranks() const override { return n; }
  void send(Rank dst, MsgHeader h, Payload p) override {
    h.src = me;
    q->push_back({dst, h, std::vector<std::byte>(p.data, p.data + p.size)});
  }
  Stats &stats() override { return s; }
  std::deque<Msg> *q;
  Rank me, n;
  Stats s;
};

template <typename Service>
struct Cluster {
  explicit Cluster(Rank n) {
    for (Rank r = 0; r < n; ++r) {
      nodes.push_back(std::make_unique<Node>(&q, r, n));
      services.push_back(std::make_unique<Service>(*nodes.back()));
    }
  }
  void run() {
    while (!q.empty()) {
      auto m = std::move(q.front());
      q.pop_front();
      services[m.dst]->on_message(m.h, {m.p.data(), m.p.size()});
    }
  }
  std::deque<Node::Msg> q;
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<Service>> services;
};

TEST(LockServiceChecks, LockPassesInRequestOrder) {
  Cluster<LockService> c(3);
  Waiter w1, w2, w0;
  ASSERT_EQ(c.services[1]->acquire(5, 11, &w1), 0);  // lock 5 is managed by rank 2
  c.run();
  ASSERT_TRUE(w1.done());
  ASSERT_EQ(c.services[0]->acquire(5, 10, &w0), 0);
  c.run();  // rank 0's request reaches the manager first
  ASSERT_EQ(c.services[2]->acquire(5, 12, &w2), 0);
  c.run();
  EXPECT_FALSE(w0.done() || w2.done());
  EXPECT_EQ(c.services[1]->acquire(5, 11, &w1), -8);  // relock: deadlock
  EXPECT_EQ(c.services[0]->release(5, 10), -4);       // not the holder
  ASSERT_EQ(c.services[1]->release(5, 11), 0);
  c.run();
  EXPECT_TRUE(w0.done());
  EXPECT_FALSE(w2.done());
  ASSERT_EQ(c.services[0]->release(5, 10), 0);
  c.run();
  EXPECT_TRUE(w2.done());
  EXPECT_TRUE(c.services[2]->holds(5, 12));
}

TEST(BarrierServiceChecks, CompletesWhenEveryRankArrived) {
  for (Rank n : {1, 2, 3, 5}) {
    Cluster<BarrierService> c(n);
    std::vector<Waiter> w(n);
    for (int round = 0; round < 3; ++round) {
      for (Rank r = 0; r + 1 < n; ++r) {
        w[r].reset();
        ASSERT_EQ(c.services[r]->arrive(&w[r]), 0);
      }
      c.run();
      for (Rank r = 0; r + 1 < n; ++r) EXPECT_FALSE(w[r].done()) << "n=" << n;
      w[n - 1].reset();
      ASSERT_EQ(c.services[n - 1]->arrive(&w[n - 1]), 0);
      c.run();
      for (Rank r = 0; r < n; ++r) EXPECT_TRUE(w[r].done()) << "n=" << n << " rank " << r;
    }
  }
}

#ifdef AGORA_CHECKS
TEST(LockServiceChecks, ReleaseByARankThatDoesNotHoldIsCaught) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  Cluster<LockService> c(2);
  // Lock 0 is managed by rank 0 and free: a release message from rank 1.
  EXPECT_DEATH(c.services[0]->on_message({Channel::Lock, 3 /* kRelease */, 1, 0, 0, 0}, {}),
               "internal check failed: l.held && l.holder == releaser");
}

TEST(BarrierServiceChecks, SignalOfAFinishedBarrierIsCaught) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  Cluster<BarrierService> c(2);
  Waiter a, b;
  c.services[0]->arrive(&a);
  c.services[1]->arrive(&b);
  c.run();
  ASSERT_TRUE(a.done() && b.done());
  EXPECT_DEATH(c.services[0]->on_message({Channel::Barrier, 0, 1, 1 /* epoch */, 0, 0}, {}), "internal check failed");
  EXPECT_DEATH(c.services[0]->on_message({Channel::Barrier, 0, 1, 3 /* two ahead */, 0, 0}, {}),
               "internal check failed");
}
#endif

}  // namespace
}  // namespace agora

// ---- spinning on one object: the back-off -----------------------------------

TEST(SpinBackoff, FreeTurnsThenDoublingNapsUpToTheCap) {
  const uint32_t want[] = {0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 200, 200};
  for (uint32_t turn = 1; turn <= 12; ++turn) EXPECT_EQ(agora::spin_backoff_us(turn, 2, 200), want[turn - 1]) << turn;
  EXPECT_EQ(agora::spin_backoff_us(1000, 2, 200), 200u);
}

TEST(SpinBackoff, AnAtomicLoadNapsOnlyWhileItsValueStays) {
  agora::AtomicSpin spin;
  const uint64_t one = 1, two = 2;
  EXPECT_EQ(spin.after_load(64, &one, 8), 0u);  // a new streak
  EXPECT_EQ(spin.after_load(64, &one, 8), 0u);
  EXPECT_EQ(spin.after_load(64, &one, 8), 0u);
  EXPECT_EQ(spin.after_load(64, &one, 8), 1u);
  EXPECT_EQ(spin.after_load(64, &one, 8), 2u);
  EXPECT_EQ(spin.after_load(64, &two, 8), 0u);  // the value changed
  EXPECT_EQ(spin.after_load(72, &two, 8), 0u);  // another word
}

TEST(SpinBackoff, ATrylockNapsOnlyWhenTriedStraightBack) {
  agora::TrylockSpin spin;
  double now = 1000;
  auto turn = [&](uint64_t key, double gap) {
    now += gap;
    uint32_t nap = spin.before_try(key, now);
    spin.after_try(now);
    return nap;
  };
  EXPECT_EQ(turn(5, 0), 0u);
  EXPECT_EQ(turn(5, 1), 0u);
  EXPECT_EQ(turn(5, 1), 0u);
  EXPECT_EQ(turn(5, 1), 1u);
  EXPECT_EQ(turn(5, 1), 2u);
  EXPECT_EQ(turn(5, 1000), 0u);  // after a pause: starts over
  EXPECT_EQ(turn(6, 1), 0u);     // another lock: starts over
}
