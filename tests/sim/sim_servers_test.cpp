// Memory servers in the simulator (docs/memory-servers.md): the last 1..2
// nodes home every shared page and compute nothing (their threads only pass
// the barriers); the other nodes run the random programs of sim_sc_test
// (racy, every read checked against the latest write) and sim_hlrc_test
// (data-race-free, both interval policies), with cross-pair reordering. The
// engines are unchanged: this checks that a home which never reads, writes
// or locks its pages serves them right under every interleaving, and that
// the checker still catches broken coherence in this layout.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "sim/sim_seeds.h"
#include "sim_program.h"

using namespace agora;
using namespace agora::simtest;

namespace {

SimOptions options_for(uint64_t seed, const char *protocol) {
  SimOptions o;
  o.protocol = protocol;
  o.seed = seed;
  o.server_nodes = 1 + (int)(seed % 2);                  // 1..2 servers
  o.nodes = o.server_nodes + 1 + (int)((seed / 2) % 4);  // 1..4 compute nodes
  o.pages = 2 + (seed / 8) % 7;                          // 2..8 tiny pages
  o.page_size = 32 + 32 * (seed % 3 == 0);
  o.home_block = 1 + (seed / 5) % 2;  // stripes of 1 or 2 pages
  return o;
}

ProgramShape racy_shape_for(uint64_t seed) {
  ProgramShape s;
  s.threads_per_node = 1 + (int)(seed % 3);
  s.locks = 1 + (int)(seed % 2);
  return s;
}

ProgramShape race_free_shape_for(uint64_t seed) {
  ProgramShape s;
  s.data_race_free = true;
  s.threads_per_node = 1 + (int)(seed % 3);
  s.locks = 1 + (int)(seed % 2);
  s.lock_fraction = 0.2;
  s.phases = 5;
  s.ops_per_phase = 30;
  s.thread_barrier_fraction = seed % 2 ? 0.5 : 0;  // half the seeds: thread barriers too
  return s;
}

void run(const char *protocol, IntervalPolicy policy, bool race_free, uint64_t default_seeds) {
  const SeedRange range = sim_seeds(default_seeds);
  const uint64_t seeds = range.count;
  uint64_t messages = 0;
  for (uint64_t seed = range.first; seed < range.end(); ++seed) {
    SimOptions o = options_for(seed, protocol);
    o.engine.intervals = policy;
    RunResult r = run_against_latest_write(o, race_free ? race_free_shape_for(seed) : racy_shape_for(seed));
    ASSERT_TRUE(r.ok) << r.failure << "\nreplay: AGORA_SIM_SEED=" << seed
                      << " ./sim_tests --gtest_filter='SimServers*'";
    messages += r.messages;
  }
  EXPECT_GT(messages, seeds * 10);  // the compute nodes really fetched from the servers
}

}  // namespace

TEST(SimServers, LayoutHomesEverySharedPageOnTheServers) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SimOptions o = options_for(seed, "sc");
    SimCluster cluster(o);
    for (PageId p = 0; p < o.pages; ++p) {
      Rank h = cluster.node(0).home_of(p);
      EXPECT_GE(h, o.nodes - o.server_nodes) << "seed " << seed << " page " << p;
      EXPECT_LT(h, o.nodes);
    }
  }
}

TEST(SimServers, ScRandomProgramsOverManySeeds) { run("sc", IntervalPolicy::Lazy, false, 1500); }
TEST(SimServers, HlrcLazyRaceFreeProgramsOverManySeeds) { run("hlrc", IntervalPolicy::Lazy, true, 1000); }
TEST(SimServers, HlrcAggressiveRaceFreeProgramsOverManySeeds) { run("hlrc", IntervalPolicy::Aggressive, true, 1000); }

TEST(SimServers, CheckerCatchesIgnoredDowngradesWithServers) {
  // Stale copies survive writes elsewhere when downgrades are ignored: the
  // oracle must notice in this layout too, or the tests above prove nothing.
  int caught = 0;
  const int n = 100;
  for (uint64_t seed = 1; seed <= (uint64_t)n; ++seed) {
    SimOptions o = options_for(seed, "sc");
    o.ignore_downgrades = true;
    if (!run_against_latest_write(o, racy_shape_for(seed)).ok) ++caught;
  }
  std::printf("ignored downgrades with memory servers caught in %d of %d seeds (sc)\n", caught, n);
  EXPECT_GT(caught, n / 10);
}

TEST(SimServers, CheckerCatchesEngineMutationsWithServers) {
  // The sc engine's own planted bugs, in this layout (sequential sweeps over
  // runs of pages homed on one server, so prefetch and batching happen).
  for (auto mutation : {EngineOptions::Mutation::ScPrefetchIgnoresState, EngineOptions::Mutation::ScBatchSkipsReader}) {
    int caught = 0;
    const int n = 300;
    for (uint64_t seed = 1; seed <= (uint64_t)n; ++seed) {
      SimOptions o = options_for(seed, "sc");
      o.pages = 4 + (seed / 5) % 21;
      o.home_block = 2 + (seed / 3) % 7;
      o.engine.mutation = mutation;
      ProgramShape s = racy_shape_for(seed);
      s.sweep_fraction = 0.3;
      if (!run_against_latest_write(o, s).ok) ++caught;
    }
    std::printf("sc mutation %d with memory servers caught in %d of %d seeds\n", (int)mutation, caught, n);
    EXPECT_GT(caught, n / 20);
  }
}
