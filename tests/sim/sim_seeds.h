// The seeds a randomized simulator test runs, read from the environment in
// one place (docs/testing.md):
//   AGORA_SIM_SEED=N   replay seed N alone;
//   AGORA_SIM_SEEDS=N  run N seeds instead of the test's own count (the fast
//                      tier and the sanitizer job lower it; --full raises it).
// A run with a planted mutation measures a catch rate over its own seeds
// (the schedules are deterministic): it keeps its fixed count, or asks for
// sim_seeds_at_most when its threshold is a fraction of the seeds run.
#pragma once
#include <cstdint>
#include <cstdlib>

namespace agora::simtest {

struct SeedRange {
  uint64_t first = 1;
  uint64_t count = 0;
  uint64_t end() const { return first + count; }
};

// AGORA_SIM_SEEDS, or `fallback` when unset.
inline uint64_t sim_seed_count(uint64_t fallback) {
  const char *env = std::getenv("AGORA_SIM_SEEDS");
  return env ? std::strtoull(env, nullptr, 10) : fallback;
}

// True when AGORA_SIM_SEED asks for one seed (a replay).
inline bool sim_seed_replay() { return std::getenv("AGORA_SIM_SEED") != nullptr; }

// [1, 1 + count) with count from sim_seed_count, or the replayed seed alone.
inline SeedRange sim_seeds(uint64_t fallback) {
  if (const char *env = std::getenv("AGORA_SIM_SEED")) return {std::strtoull(env, nullptr, 10), 1};
  return {1, sim_seed_count(fallback)};
}

// As sim_seeds, but AGORA_SIM_SEEDS only lowers `count`.
inline SeedRange sim_seeds_at_most(uint64_t count) {
  SeedRange range = sim_seeds(count);
  if (range.count > count) range.count = count;
  return range;
}

}  // namespace agora::simtest
