// Lock ids (lock_ids.h): collective ids, their creations' signatures, and
// the ids of locks agora threads create.
#include "runtime/locks/lock_ids.h"

#include <algorithm>

#include "common/log.h"

namespace agora {

namespace {
uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t LockIds::signature(uint64_t id) const {
  auto after = std::upper_bound(creations_.begin(), creations_.end(), id,
                                [](uint64_t v, const Creation &c) { return v < c.first; });
  if (after == creations_.begin()) return 0;
  const Creation &c = *std::prev(after);
  if (id >= c.first + c.count) return 0;
  return mix64(c.signature + (id - c.first)) | 1;
}

uint64_t LockIds::create(uint64_t count, uint64_t call_site, bool by_agora_thread, Rank rank) {
  if (by_agora_thread) {
    // An agora thread creates locks alone (no other rank calls with it):
    // ids of this rank's own, clear of the collective ones.
    uint64_t first = (1ull << 62) | ((uint64_t)rank << 40) | next_thread_;
    next_thread_ += count;
    return first;
  }
  if (next_ + count > limit_) {
    // Ids from the limit up are the addresses of address-named locks.
    log_error("agora_lock_array_create(%llu): too many locks created collectively (at most 2^45 in all)",
              (unsigned long long)count);
    return UINT64_MAX;
  }
  uint64_t first = next_;
  next_ += count;
  // The signature: the creating call (site, how many creations before it, size).
  uint64_t signature = mix64(call_site ^ mix64(creations_.size() + 1) ^ mix64(count << 1));
  creations_.push_back({first, count, signature});
  return first;
}

}  // namespace agora
