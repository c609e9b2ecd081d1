// The hlrc engine in the simulator, over many seeds and both interval
// policies: random data-race-free programs (plain words owned by one thread
// per phase or read-only, lock-guarded words touched only under their lock,
// barriers between phases; different threads write neighbouring words of the
// same tiny pages) with cross-pair message reordering; then the same with
// thread barriers ending half the phases and semaphore hand-offs. Every read must return
// the one write release consistency allows. A failing seed is printed; rerun
// it with AGORA_SIM_SEED=<seed> (and AGORA_SIM_POLICY=lazy|aggressive).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "sim/sim_program.h"

using namespace agora;
using namespace agora::simtest;

namespace {

SimOptions options_for(uint64_t seed, IntervalPolicy policy) {
  SimOptions o;
  o.protocol = "hlrc";
  o.engine.intervals = policy;
  o.seed = seed;
  o.nodes = 2 + (int)(seed % 4);   // 2..5 nodes
  o.pages = 2 + (seed / 4) % 6;    // 2..7 tiny pages: heavy false sharing
  o.page_size = 32 + 32 * (seed % 2);
  return o;
}

ProgramShape shape_for(uint64_t seed) {
  ProgramShape s;
  s.data_race_free = true;
  s.threads_per_node = 1 + (int)(seed % 3);  // 1..3 threads per node
  s.locks = 1 + (int)(seed % 2);
  s.lock_fraction = 0.2;
  s.phases = 5;
  s.ops_per_phase = 30;
  return s;
}

// The same programs with thread barriers (half the phases end with one over
// all threads of all nodes) and semaphore hand-offs (up to two per phase):
// the services carry consistency exactly as agora_barrier and locks do.
ProgramShape thread_sync_shape_for(uint64_t seed) {
  ProgramShape s = shape_for(seed);
  s.thread_barrier_fraction = 0.5;
  s.handoffs_per_phase = 2;
  return s;
}

const char *policy_name(IntervalPolicy p) { return p == IntervalPolicy::Lazy ? "lazy" : "aggressive"; }

void run_seeds(IntervalPolicy policy, ProgramShape (*shape_of)(uint64_t) = shape_for,
               uint64_t seeds = 2000, const char *test = "") {
  if (const char *only = std::getenv("AGORA_SIM_POLICY"))
    if (std::strcmp(only, policy_name(policy)) != 0) return;
  if (const char *env = std::getenv("AGORA_SIM_SEEDS")) seeds = std::strtoull(env, nullptr, 10);
  uint64_t first = 1, total_messages = 0;
  if (const char *env = std::getenv("AGORA_SIM_SEED")) first = std::strtoull(env, nullptr, 10), seeds = 1;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    RunResult r = run_against_latest_write(options_for(seed, policy), shape_of(seed));
    ASSERT_TRUE(r.ok) << r.failure << "\nreplay: AGORA_SIM_SEED=" << seed
                      << " AGORA_SIM_POLICY=" << policy_name(policy) << " ./sim_tests" << test;
    total_messages += r.messages;
  }
  EXPECT_GT(total_messages, seeds * 10);
}

}  // namespace

TEST(SimHlrc, LazyIntervalsRaceFreeProgramsOverManySeeds) { run_seeds(IntervalPolicy::Lazy); }
TEST(SimHlrc, AggressiveIntervalsRaceFreeProgramsOverManySeeds) { run_seeds(IntervalPolicy::Aggressive); }
TEST(SimHlrc, LazyIntervalsThreadBarriersAndSemaphoresOverManySeeds) {
  run_seeds(IntervalPolicy::Lazy, thread_sync_shape_for, 2000,
            " --gtest_filter='SimHlrc.LazyIntervalsThreadBarriers*'");
}
TEST(SimHlrc, AggressiveIntervalsThreadBarriersAndSemaphoresOverManySeeds) {
  run_seeds(IntervalPolicy::Aggressive, thread_sync_shape_for, 2000,
            " --gtest_filter='SimHlrc.AggressiveIntervalsThreadBarriers*'");
}

TEST(SimHlrc, CheckerCatchesIgnoredInvalidations) {
  // With downgrades ignored, a notice no longer removes a stale copy (and
  // writes after an interval ends are no longer seen): the checker must
  // notice on many seeds, or it proves nothing.
  int caught = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    SimOptions o = options_for(seed, IntervalPolicy::Lazy);
    o.ignore_downgrades = true;
    if (!run_against_latest_write(o, shape_for(seed)).ok) ++caught;
  }
  EXPECT_GT(caught, 25);
}

TEST(SimHlrc, LockCountersAreExact) {
  SimOptions o;
  o.protocol = "hlrc";
  o.nodes = 5;
  o.pages = 3;
  o.page_size = 32;
  ProgramShape s;
  s.data_race_free = true;
  s.threads_per_node = 2;
  s.locks = 1;
  s.lock_fraction = 0.8;
  for (IntervalPolicy p : {IntervalPolicy::Lazy, IntervalPolicy::Aggressive})
    for (uint64_t seed = 1000; seed < 1020; ++seed) {
      o.seed = seed;
      o.engine.intervals = p;
      RunResult r = run_against_latest_write(o, s);
      ASSERT_TRUE(r.ok) << r.failure << " (" << policy_name(p) << ")";
    }
}

TEST(SimHlrc, SameSeedReplaysExactly) {
  RunResult a = run_against_latest_write(options_for(77, IntervalPolicy::Lazy), shape_for(77));
  RunResult b = run_against_latest_write(options_for(77, IntervalPolicy::Lazy), shape_for(77));
  ASSERT_TRUE(a.ok) << a.failure;
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.messages, b.messages);
}
