// Thread reductions (ThreadReduceService) in the simulator: teams of threads
// on several nodes reduce through several objects, round after round, with
// the order in which threads call and messages arrive chosen by the seed.
// Every participant must get bit-identical results, equal to a shadow fold
// in the order of the participants' thread ids; the double values cancel
// (1e16 + 1 - 1e16), so a fold in any other order gives other bits, and the
// arrival-order mutation must be caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <set>

#include "sim/sim_cluster.h"

namespace agora {
namespace {

using Shape = ThreadReduceService::Shape;

struct Step {
  uint64_t object;
  std::vector<int> team;  // indices into threads
  Shape shape;
  int odd = -1;  // a team member that passes n + 1 (a mismatch), or -1
};

struct SimThread {
  Rank node;
  uint64_t id;  // job-wide id, random: unrelated to nodes and arrival
  std::vector<int> steps;
  size_t pc = 0;
  bool waiting = false;
  Waiter w;
  std::vector<std::byte> buf;
};

// The value thread t contributes at element i of step s: values that cancel
// (so the order of a double sum shows in its bits), and any int64.
uint64_t value_bits(uint64_t seed, int s, int t, size_t i, ReduceType type) {
  std::mt19937_64 g(seed * 1000003 + (uint64_t)s * 7919 + (uint64_t)t * 104729 + i);
  if (type == ReduceType::Int64) return g();
  static const double kValues[] = {1e16, -1e16, 1.0, 0.5, 3.0, -7.25, 1e-8, 2.5e15, -3e15};
  double d = kValues[g() % (sizeof kValues / sizeof *kValues)];
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return bits;
}

// The fold a correct manager does, written independently of the service.
std::vector<std::byte> shadow(uint64_t seed, int s, const Step &step, const std::deque<SimThread> &threads) {
  std::vector<int> order = step.team;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return threads[a].id < threads[b].id; });
  std::vector<std::byte> out(step.shape.n * 8);
  for (size_t i = 0; i < step.shape.n; ++i) {
    if (step.shape.type == ReduceType::Int64) {
      int64_t acc = 0;
      for (size_t k = 0; k < order.size(); ++k) {
        int64_t v = (int64_t)value_bits(seed, s, order[k], i, step.shape.type);
        if (k == 0)
          acc = v;
        else if (step.shape.op == ReduceOp::Sum)
          acc = (int64_t)((uint64_t)acc + (uint64_t)v);
        else if (step.shape.op == ReduceOp::Min)
          acc = std::min(acc, v);
        else
          acc = std::max(acc, v);
      }
      std::memcpy(&out[i * 8], &acc, 8);
    } else {
      double acc = 0;
      for (size_t k = 0; k < order.size(); ++k) {
        uint64_t bits = value_bits(seed, s, order[k], i, step.shape.type);
        double v;
        std::memcpy(&v, &bits, 8);
        if (k == 0)
          acc = v;
        else if (step.shape.op == ReduceOp::Sum)
          acc = acc + v;
        else if (step.shape.op == ReduceOp::Min)
          acc = std::min(acc, v);
        else
          acc = std::max(acc, v);
      }
      std::memcpy(&out[i * 8], &acc, 8);
    }
  }
  return out;
}

struct Outcome {
  std::string failure;  // empty: every check passed
  int rounds = 0, mismatched_rounds = 0;
};

// Runs one seeded scenario; mismatch_fraction: rounds with one odd member.
Outcome run_seed(uint64_t seed, bool arrival_order_mutation, double mismatch_fraction) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  SimOptions o;
  o.nodes = 2 + (int)(rng() % 3);
  o.seed = seed;
  o.protocol = seed % 2 ? "hlrc" : "sc";  // the service does not care; both hosts must carry it
  SimCluster cluster(o);
  for (Rank r = 0; r < o.nodes; ++r)
    cluster.node(r).thread_reductions().combine_in_arrival_order_for_testing(arrival_order_mutation);

  std::deque<SimThread> threads;  // a deque: Waiter does not move
  std::set<uint64_t> ids;
  for (Rank r = 0; r < o.nodes; ++r) {
    int per_node = 1 + (int)(rng() % 3);
    for (int k = 0; k < per_node; ++k) {
      uint64_t id;
      do id = rng() >> 1;
      while (!ids.insert(id).second);
      threads.emplace_back();
      threads.back().node = r;
      threads.back().id = id;
    }
  }
  const int nthreads = (int)threads.size();

  // Objects on different pages (so different managers), each with a team.
  const int nobjects = 3;
  std::vector<uint64_t> objects;
  std::vector<std::vector<int>> teams(nobjects);
  for (int k = 0; k < nobjects; ++k) {
    objects.push_back((uint64_t)k * o.page_size + 8 * (uint64_t)k);
    for (int t = 0; t < nthreads; ++t)
      if (rng() % 4 != 0) teams[k].push_back(t);
    if (teams[k].empty()) teams[k].push_back((int)(rng() % nthreads));
  }
  // init, from a random node each, before any round (as a program's main does).
  for (int k = 0; k < nobjects; ++k) {
    Waiter w;
    cluster.node((Rank)(rng() % o.nodes)).thread_reductions().init(objects[k], (uint32_t)teams[k].size(), &w);
    while (!w.done()) cluster.deliver_one();
    if (w.status != 0) return {"init failed"};
  }

  // Steps in one global order (so no team waits for another in a cycle).
  std::vector<Step> steps;
  for (int s = 0; s < 16; ++s) {
    int k = (int)(rng() % nobjects);
    Step st{objects[k], teams[k], {}, -1};
    st.shape.n = 1 + rng() % 6;
    st.shape.type = rng() % 3 ? ReduceType::Double : ReduceType::Int64;
    st.shape.op = rng() % 2 ? ReduceOp::Sum : rng() % 2 ? ReduceOp::Min : ReduceOp::Max;
    if (st.team.size() >= 2 && std::uniform_real_distribution<double>(0, 1)(rng) < mismatch_fraction)
      st.odd = st.team[rng() % st.team.size()];
    for (int t : st.team) threads[t].steps.push_back(s);
    steps.push_back(st);
  }

  std::map<std::pair<int, int>, std::pair<int, std::vector<std::byte>>> got;  // (step, thread) -> status, result
  auto issue = [&](int t) {
    SimThread &th = threads[t];
    int s = th.steps[th.pc];
    Shape shape = steps[s].shape;
    if (steps[s].odd == t) shape.n += 1;
    th.buf.assign(shape.n * 8, std::byte{0});
    for (size_t i = 0; i < shape.n; ++i) {
      uint64_t bits = value_bits(seed, s, t, i, shape.type);
      std::memcpy(&th.buf[i * 8], &bits, 8);
    }
    th.w.reset();
    th.waiting = true;
    cluster.node(th.node).thread_reductions().reduce(steps[s].object, th.id, shape, th.buf.data(), &th.w);
  };
  for (;;) {
    for (int t = 0; t < nthreads; ++t) {
      SimThread &th = threads[t];
      if (!th.waiting || !th.w.done()) continue;
      got[{th.steps[th.pc], t}] = {th.w.status, th.buf};
      th.waiting = false;
      th.pc++;
    }
    std::vector<int> ready;
    for (int t = 0; t < nthreads; ++t)
      if (!threads[t].waiting && threads[t].pc < threads[t].steps.size()) ready.push_back(t);
    size_t choices = ready.size() + (cluster.in_flight() ? 1 : 0);
    if (choices == 0) break;
    size_t pick = rng() % choices;
    if (pick < ready.size())
      issue(ready[pick]);
    else
      cluster.deliver_one();
  }

  Outcome out;
  for (int t = 0; t < nthreads; ++t)
    if (threads[t].pc != threads[t].steps.size())
      return {"thread " + std::to_string(t) + " never completed step " +
              std::to_string(threads[t].steps[threads[t].pc])};
  for (int s = 0; s < (int)steps.size(); ++s) {
    const Step &st = steps[s];
    out.rounds++;
    if (st.odd >= 0) {
      out.mismatched_rounds++;
      for (int t : st.team)
        if (got[{s, t}].first != -9)
          return {"step " + std::to_string(s) + ": a mismatched round gave thread " + std::to_string(t) + " status " +
                  std::to_string(got[{s, t}].first) + ", not -9"};
      continue;
    }
    std::vector<std::byte> expect = shadow(seed, s, st, threads);
    for (int t : st.team) {
      const auto &[status, result] = got[{s, t}];
      if (status != 0) return {"step " + std::to_string(s) + ": status " + std::to_string(status)};
      if (result != expect)
        return {"step " + std::to_string(s) + " (" + ThreadReduceService::describe(st.shape) + ", team of " +
                std::to_string(st.team.size()) + "): thread " + std::to_string(t) +
                " got other bits than the fold in thread-id order"};
    }
  }
  return out;
}

TEST(SimThreadReduce, IdOrderBitIdenticalOverManySeeds) {
  int rounds = 0;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    Outcome o = run_seed(seed, false, 0.0);
    ASSERT_TRUE(o.failure.empty()) << "seed " << seed << ": " << o.failure;
    rounds += o.rounds;
  }
  EXPECT_EQ(rounds, 2000 * 16);
}

TEST(SimThreadReduce, MismatchedRoundsFailForEveryParticipantAndLaterRoundsWork) {
  int mismatched = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    Outcome o = run_seed(seed, false, 0.3);
    ASSERT_TRUE(o.failure.empty()) << "seed " << seed << ": " << o.failure;
    mismatched += o.mismatched_rounds;
  }
  EXPECT_GT(mismatched, 100);
}

// The checker has teeth: a manager that folds in arrival order (participants
// still agree with each other) is caught within a few seeds.
TEST(SimThreadReduce, ArrivalOrderMutationIsCaught) {
  uint64_t caught_at = 0;
  for (uint64_t seed = 1; seed <= 20 && !caught_at; ++seed)
    if (!run_seed(seed, true, 0.0).failure.empty()) caught_at = seed;
  EXPECT_NE(caught_at, 0u) << "a fold in arrival order went unnoticed for 20 seeds";
  EXPECT_LE(caught_at, 5u);
  std::printf("arrival-order fold caught at seed %llu\n", (unsigned long long)caught_at);
}

// A cluster of two nodes, one object managed by node 1; drives messages until w completes.
struct Pair {
  SimOptions o;
  SimCluster cluster;
  Pair()
      : o([] {
          SimOptions x;
          x.nodes = 2;
          x.seed = 0;
          return x;
        }()),
        cluster(o) {}
  ThreadReduceService &at(Rank r) { return cluster.node(r).thread_reductions(); }
  void drive(Waiter &w) {
    while (!w.done() && cluster.deliver_one()) {
    }
  }
};

TEST(SimThreadReduce, UninitialisedBusyAndInvalid) {
  Pair p;
  const uint64_t object = p.o.page_size + 16;  // page 1: node 1 manages it
  ASSERT_EQ(p.cluster.node(0).manager_of(object), 1);
  double v = 1;
  Waiter w;
  p.at(0).reduce(object, 1, {1, ReduceType::Double, ReduceOp::Sum, true}, &v, &w);
  p.drive(w);
  ASSERT_TRUE(w.done());
  EXPECT_EQ(w.status, -2);  // never initialised

  Waiter init;
  p.at(0).init(object, 2, &init);
  p.drive(init);
  ASSERT_EQ(init.status, 0);
  Waiter first, busy, reinit;
  p.at(0).reduce(object, 1, {1, ReduceType::Double, ReduceOp::Sum, true}, &v, &first);
  while (p.cluster.deliver_one()) {
  }
  EXPECT_FALSE(first.done());
  p.at(1).destroy(object, &busy);
  p.drive(busy);
  EXPECT_EQ(busy.status, 2);  // AGORA_BUSY: a round is under way
  p.at(1).init(object, 3, &reinit);
  p.drive(reinit);
  EXPECT_EQ(reinit.status, -2);

  // An invalid contribution (too many elements) fails the round for both.
  Waiter second;
  p.at(1).reduce(object, 2, {ThreadReduceService::kMaxElements + 1, ReduceType::Double, ReduceOp::Sum, false}, nullptr,
                 &second);
  p.drive(first);
  p.drive(second);
  EXPECT_EQ(first.status, -2);
  EXPECT_EQ(second.status, -2);

  // The object is usable again for the next round.
  double a = 1e16, b = 1.0;
  Waiter ra, rb;
  p.at(1).reduce(object, 7, {1, ReduceType::Double, ReduceOp::Sum, true}, &a, &ra);
  p.at(0).reduce(object, 3, {1, ReduceType::Double, ReduceOp::Sum, true}, &b, &rb);
  p.drive(ra);
  p.drive(rb);
  EXPECT_EQ(ra.status, 0);
  EXPECT_EQ(rb.status, 0);
  EXPECT_EQ(a, 1.0 + 1e16);
  EXPECT_EQ(std::memcmp(&a, &b, 8), 0);

  Waiter gone, after;
  p.at(0).destroy(object, &gone);
  p.drive(gone);
  EXPECT_EQ(gone.status, 0);
  p.at(0).reduce(object, 1, {1, ReduceType::Double, ReduceOp::Sum, true}, &v, &after);
  p.drive(after);
  EXPECT_EQ(after.status, -2);  // destroyed: not initialised
}

}  // namespace
}  // namespace agora
