// The seeds a randomized simulator test runs, read from the environment in
// one place (docs/testing.md):
//   AGORA_SIM_SEED=N   replay seed N alone;
//   AGORA_SIM_SEEDS=N  run N seeds instead of the test's own count (the fast
//                      tier and the sanitizer job lower it).
// A run with a planted mutation measures a catch rate over its own seeds
// (the schedules are deterministic): it keeps its fixed count
// (sim_mutation_seeds), so a tier with fewer seeds still catches every
// planted bug.
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

// A planted mutation's run: [1, 1 + count) whatever AGORA_SIM_SEEDS says
// (its catch thresholds count over these seeds), or the replayed seed alone.
inline SeedRange sim_mutation_seeds(uint64_t count) {
  if (sim_seed_replay()) return sim_seeds(count);
  return {1, count};
}

}  // namespace agora::simtest
