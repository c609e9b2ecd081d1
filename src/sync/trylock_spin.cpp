#include "sync/trylock_spin.h"

#include "sync/spin_backoff.h"

namespace agora {

uint32_t TrylockSpin::before_try(uint64_t key, double now_us) {
  bool straight_back = key == key_ && now_us - last_end_us_ < kStraightBackUs;
  key_ = key;
  if (!straight_back) {
    turns_ = 0;
    return 0;
  }
  return spin_backoff_us(++turns_, kFreeTurns, kMaxNapUs);
}

}  // namespace agora
