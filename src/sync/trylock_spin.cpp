#include "sync/trylock_spin.h"

#include <algorithm>

namespace agora {

uint32_t TrylockSpin::before_try(uint64_t key, double now_us) {
  bool straight_back = key == key_ && now_us - last_end_us_ < kStraightBackUs;
  key_ = key;
  if (!straight_back) {
    turns_ = 0;
    return 0;
  }
  if (++turns_ <= kFreeTurns) return 0;
  uint32_t shift = turns_ - kFreeTurns - 1;
  return shift >= 8 ? kMaxNapUs : std::min<uint32_t>(kMaxNapUs, 1u << shift);
}

}  // namespace agora
