// The bounded cache in the simulator (docs/cache.md): the existing protocol
// testers' random programs, each node holding at most a few copies of
// remote pages (evicted by the cache policy after every delivery) and, at
// random deliveries, one copy evicted at random. Every read is checked by
// the protocol's own shadow model: sc's latest write, hlrc's race-free
// programs (the one write release consistency allows), regc's rule oracle.
// An evicted frame is overwritten (SimOptions::kEvictedByte), so a copy the
// protocol forgot it dropped reads as garbage. Then planted bugs: each must
// be caught on many seeds (the counts are printed). Replay a failure with
// AGORA_SIM_SEED=<seed>.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "sim/sim_program.h"
#include "sim/sim_regc_program.h"
#include "sim/sim_seeds.h"

using namespace agora;
using namespace agora::simtest;

namespace {

using Mutation = EngineOptions::CacheMutation;

// A run's outcome, whatever the tester.
struct Outcome {
  bool ok;
  std::string failure;
  Stats totals;
};

// Cache sizes 1..4 copies per node (the programs use 2..24 pages), random
// evictions on half the deliveries of odd seeds, both policies.
void with_cache(SimOptions *o, uint64_t seed) {
  o->cache_pages = 1 + seed % 4;
  o->cache_policy = (seed / 4) % 2 ? CachePolicy::Fifo : CachePolicy::Clock;
  o->evict_chance = seed % 2 ? 0.5 : 0.1;
}

// ---- per protocol: options and shape as in its own tester, plus the cache ----

Outcome run_sc(uint64_t seed, Mutation m) {
  SimOptions o;
  o.protocol = "sc";
  o.seed = seed;
  o.nodes = 2 + (int)(seed % 4);
  o.pages = 4 + (seed / 5) % 13;
  o.home_block = 1 + (seed / 3) % 4;  // sequential misses: prefetch and write runs too
  o.page_size = 32;
  o.engine.prefetch_max = seed % 3 ? 4 : 0;
  o.engine.cache_mutation = m;
  with_cache(&o, seed);
  ProgramShape s;
  s.threads_per_node = 1 + (int)(seed % 3);
  s.locks = 1 + (int)(seed % 2);
  s.sweep_fraction = 0.3;
  RunResult r = run_against_latest_write(o, s);
  return {r.ok, r.failure, r.totals};
}

Outcome run_hlrc(uint64_t seed, Mutation m) {
  SimOptions o;
  o.protocol = "hlrc";
  o.seed = seed;
  o.engine.intervals = (seed / 2) % 2 ? IntervalPolicy::Aggressive : IntervalPolicy::Lazy;
  o.nodes = 2 + (int)(seed % 4);
  o.pages = 3 + (seed / 4) % 8;
  o.page_size = 32 + 32 * (seed % 2);
  o.home_block = 1 + (seed / 2) % 3;
  // A third of the seeds as today's host, the rest with write tracking and
  // one-sided reads (where a fetch does not queue behind a write-back).
  o.track_home_writes = seed % 3 != 0;
  o.one_sided = seed % 3 != 0;
  o.engine.prefetch_max = (seed / 6) % 2 ? 4 : 0;
  o.engine.refresh = (seed / 12) % 2 == 0;
  o.engine.cache_mutation = m;
  with_cache(&o, seed);
  ProgramShape s;
  s.data_race_free = true;
  s.threads_per_node = 1 + (int)(seed % 3);
  s.locks = 1 + (int)(seed % 2);
  s.lock_fraction = 0.2;
  s.phases = 5;
  s.ops_per_phase = 30;
  s.thread_barrier_fraction = seed % 5 == 0 ? 0.5 : 0;
  s.handoffs_per_phase = seed % 5 == 0 ? 2 : 0;
  RunResult r = run_against_latest_write(o, s);
  return {r.ok, r.failure, r.totals};
}

Outcome run_regc(const std::string &protocol, uint64_t seed, Mutation m) {
  SimOptions o;
  o.protocol = protocol;
  o.seed = seed;
  o.nodes = 2 + (int)(seed % 4);
  o.pages = 3 + (seed / 4) % 6;
  o.page_size = 32 + 32 * (seed / 3 % 2);
  o.home_block = 1 + (seed / 2) % 3;  // sequential misses to one home: prefetch
  o.engine.prefetch_max = seed % 3 ? 4 : 0;
  o.engine.cache_mutation = m;
  with_cache(&o, seed);
  RegcShape s;
  s.threads_per_node = 1 + (int)(seed % 3);
  s.locks = 2 + (int)(seed / 2 % 3);
  RegcRunResult r = run_random_regc_program(o, s);
  return {r.ok, r.failure, r.totals};
}

Outcome run_protocol(const std::string &protocol, uint64_t seed, Mutation m) {
  if (protocol == "sc") return run_sc(seed, m);
  if (protocol == "hlrc") return run_hlrc(seed, m);
  return run_regc(protocol, seed, m);
}

void expect_correct_under_eviction(const std::string &protocol, uint64_t seeds) {
  const SeedRange range = sim_seeds(seeds);
  seeds = range.count;
  const uint64_t first = range.first;
  Stats totals;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    Outcome r = run_protocol(protocol, seed, Mutation::None);
    ASSERT_TRUE(r.ok) << protocol << ": " << r.failure << "\nreplay: AGORA_SIM_SEED=" << seed
                      << " ./sim_tests --gtest_filter='SimCache.*'";
    totals.combine(r.totals);
  }
  std::printf(
      "[ figures  ] %s: %llu seeds, %llu evictions, %llu write-backs (%llu bytes), %llu pages fetched, "
      "%llu into moved frames\n",
      protocol.c_str(), (unsigned long long)seeds, (unsigned long long)totals.cache_evictions,
      (unsigned long long)totals.cache_writebacks, (unsigned long long)totals.cache_writeback_bytes,
      (unsigned long long)totals.pages_fetched, (unsigned long long)totals.cache_frames_pooled);
  if (seeds < 50) return;  // a replay
  // The runs really evicted, clean and dirty copies alike.
  EXPECT_GT(totals.cache_evictions, seeds * 5);
  EXPECT_GT(totals.cache_writebacks, seeds);
}

// Seeds caught of seeds run, for a planted bug.
void expect_caught(const std::string &protocol, Mutation m, const char *name, uint64_t seeds, uint64_t at_least) {
  seeds = sim_seed_count(seeds);
  uint64_t caught = 0, first = 0;
  std::string failure;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    Outcome r = run_protocol(protocol, seed, m);
    if (!r.ok && !caught++) first = seed, failure = r.failure;
  }
  std::printf("[ figures  ] %s with %s: caught on %llu of %llu seeds (first: seed %llu)\n", protocol.c_str(), name,
              (unsigned long long)caught, (unsigned long long)seeds, (unsigned long long)first);
  EXPECT_GE(caught, at_least) << "the checker rarely notices " << name << " under " << protocol;
}

}  // namespace

TEST(SimCache, ScCorrectUnderEvictions) { expect_correct_under_eviction("sc", 600); }
TEST(SimCache, HlrcCorrectUnderEvictions) { expect_correct_under_eviction("hlrc", 600); }
TEST(SimCache, RegcCorrectUnderEvictions) { expect_correct_under_eviction("regc", 600); }
TEST(SimCache, RegcPageCorrectUnderEvictions) { expect_correct_under_eviction("regc-page", 600); }

TEST(SimCache, CheckersCatchDirtyCopiesDroppedWithoutWriteBack) {
  for (const char *p : {"sc", "hlrc", "regc", "regc-page"}) expect_caught(p, Mutation::DropDirty, "DropDirty", 100, 20);
}
// The frame pool (SimOptions::frames_move): an invalidated dirty copy's
// frame taken as if the engine no longer needed it loses the writes the
// next copy must keep.
TEST(SimCache, CheckersCatchDirtyFramesTaken) {
  for (const char *p : {"hlrc", "regc", "regc-page"})
    expect_caught(p, Mutation::DirtyFrameTaken, "DirtyFrameTaken", 200, 5);
}
TEST(SimCache, ScCheckerCatchesReadCopyEvictedUnderItsUpgrade) {
  expect_caught("sc", Mutation::EvictPending, "EvictPending", 100, 10);
}
TEST(SimCache, HlrcCheckerCatchesRefetchOvertakingWriteBack) {
#ifdef AGORA_CHECKS
  // With the internal checks on (the sanitizer build), a copy's own
  // invariant (never fetched while its write-back is out) stops the run at
  // the first such refetch, before the shadow model can see a stale read.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(expect_caught("hlrc", Mutation::RefetchBeforeWriteBack, "RefetchBeforeWriteBack", 100, 5),
               "internal check failed");
#else
  expect_caught("hlrc", Mutation::RefetchBeforeWriteBack, "RefetchBeforeWriteBack", 100, 5);
#endif
}

// The policy: both propose pages in their order, never the recent ones.
TEST(PageCachePolicy, FifoProposesOldestAndSparesRecent) {
  PageCache c(4, CachePolicy::Fifo, 1);
  for (PageId p = 10; p < 15; ++p) c.note_access(p, Access::Read);
  EXPECT_TRUE(c.over());
  PageId v;
  ASSERT_TRUE(c.propose(&v));
  EXPECT_EQ(v, 10u);
  c.note_access(10, Access::None);
  EXPECT_FALSE(c.over());
  ASSERT_TRUE(c.propose(&v));
  EXPECT_EQ(v, 11u);
  ASSERT_TRUE(c.propose(&v));
  EXPECT_EQ(v, 12u);
  ASSERT_TRUE(c.propose(&v));
  EXPECT_EQ(v, 13u);
  ASSERT_TRUE(c.propose(&v));
  EXPECT_EQ(v, 11u);  // around again; 14 is the protected newest
}

TEST(PageCachePolicy, ClockGivesFaultedPagesASecondChance) {
  PageCache c(3, CachePolicy::Clock, 0);
  for (PageId p = 1; p <= 3; ++p) c.note_access(p, Access::Read);
  PageId v;
  ASSERT_TRUE(c.propose(&v));  // every bit set: a full pass clears them, then the oldest
  EXPECT_EQ(v, 1u);
  c.note_access(1, Access::None);
  c.note_access(2, Access::Write);  // faulted again: referenced
  c.note_access(4, Access::Read);
  ASSERT_TRUE(c.propose(&v));
  EXPECT_EQ(v, 3u);  // 2 was spared
  PageCache unbounded(0, CachePolicy::Clock, 0);
  unbounded.note_access(1, Access::Read);
  EXPECT_EQ(unbounded.resident(), 0u);
  EXPECT_FALSE(unbounded.over());
}
