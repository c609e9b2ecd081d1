#include "memory/arena_allocator.h"

#include <iterator>

#include "common/log.h"
#include "memory/free_list_checks.h"

namespace agora {

ArenaAllocator::ArenaAllocator(uint64_t first_offset, uint64_t bytes, uint64_t page_size)
    : first_(first_offset), page_(page_size), size_(bytes), free_bytes_(bytes) {
  free_[first_offset] = bytes;
}

uint64_t ArenaAllocator::allocate(uint64_t bytes) {
  if (bytes > free_bytes_) return UINT64_MAX;  // also keeps the round-up below from wrapping
  uint64_t len = (bytes + kAlign - 1) / kAlign * kAlign;
  if (len == 0) len = kAlign;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < len) continue;
    uint64_t off = it->first, rest = it->second - len;
    free_.erase(it);
    if (rest) free_[off + len] = rest;
    live_[off] = len;
    free_bytes_ -= len;
    AGORA_ASSERT(free_lists_consistent_near(free_, live_, off, first_, first_ + size_));
    AGORA_ASSERT(free_bytes_ <= size_);
    return off;
  }
  return UINT64_MAX;
}

ArenaAllocator::FreeResult ArenaAllocator::release(uint64_t offset) {
  auto it = live_.find(offset);
  if (it == live_.end()) {
    auto after = live_.upper_bound(offset);
    if (after != live_.begin()) {
      auto prev = std::prev(after);
      if (offset < prev->first + prev->second) return FreeResult::InsideBlock;
    }
    return FreeResult::NotAllocated;
  }
  uint64_t off = it->first, len = it->second;
  live_.erase(it);
  AGORA_ASSERT(range_outside_runs(free_, off, len));  // a live block was never also free
  free_bytes_ += len;
  coalesce(off, len);
  AGORA_ASSERT(free_lists_consistent_near(free_, live_, off, first_, first_ + size_));
  AGORA_ASSERT(free_bytes_ <= size_);
  return FreeResult::Ok;
}

void ArenaAllocator::coalesce(uint64_t off, uint64_t len) {
  auto next = free_.lower_bound(off);
  if (next != free_.end() && off + len == next->first) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += len;
      return;
    }
  }
  free_[off] = len;
}

bool ArenaAllocator::page_live(uint64_t page_index) const {
  // Blocks do not overlap: only the last one starting before the page's end
  // can reach into the page.
  if (page_index >= size_ / page_) return false;  // not in this arena
  uint64_t lo = first_ + page_index * page_, hi = lo + page_;
  auto after = live_.lower_bound(hi);
  if (after == live_.begin()) return false;
  auto block = std::prev(after);
  return block->first + block->second > lo;
}

}  // namespace agora
