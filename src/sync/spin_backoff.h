// The back-off of a thread that spins on the same object (an atomic load
// that keeps returning one value, a trylock tried straight back): a few free
// turns, then a nap before each turn, twice as long each time up to a cap.
// Shared by AtomicSpin (atomic_service.h) and TrylockSpin (trylock_spin.h).
#pragma once
#include <algorithm>
#include <cstdint>

namespace agora {

// The nap (µs) before spinning turn `turn` (1 for the first repeat): 0 for
// the first `free_turns`, then 1, 2, 4 ... µs, at most max_us.
inline uint32_t spin_backoff_us(uint32_t turn, uint32_t free_turns, uint32_t max_us) {
  if (turn <= free_turns) return 0;
  const uint32_t shift = turn - free_turns - 1;
  return shift >= 31 ? max_us : std::min<uint32_t>(max_us, 1u << shift);
}

}  // namespace agora
