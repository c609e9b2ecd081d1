#include "memory/arena_allocator.h"

#include <iterator>

namespace agora {

ArenaAllocator::ArenaAllocator(uint64_t first_offset, uint64_t bytes, uint64_t page_size)
    : first_(first_offset), page_(page_size), free_bytes_(bytes) {
  free_[first_offset] = bytes;
  live_per_page_.assign(bytes / page_size + 1, 0);
}

uint64_t ArenaAllocator::allocate(uint64_t bytes) {
  uint64_t len = (bytes + kAlign - 1) / kAlign * kAlign;
  if (len == 0) len = kAlign;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < len) continue;
    uint64_t off = it->first, rest = it->second - len;
    free_.erase(it);
    if (rest) free_[off + len] = rest;
    live_[off] = len;
    free_bytes_ -= len;
    count_pages(off, len, +1);
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
  free_bytes_ += len;
  count_pages(off, len, -1);
  // Coalesce with the neighbours.
  auto next = free_.lower_bound(off);
  if (next != free_.end() && off + len == next->first) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += len;
      return FreeResult::Ok;
    }
  }
  free_[off] = len;
  return FreeResult::Ok;
}

void ArenaAllocator::count_pages(uint64_t off, uint64_t len, int delta) {
  for (uint64_t p = (off - first_) / page_; p <= (off - first_ + len - 1) / page_; ++p)
    live_per_page_[p] += delta;
}

bool ArenaAllocator::page_live(uint64_t page_index) const {
  return page_index < live_per_page_.size() && live_per_page_[page_index] > 0;
}

}  // namespace agora
