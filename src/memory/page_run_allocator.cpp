#include "memory/page_run_allocator.h"

#include <iterator>

#include "common/log.h"
#include "memory/free_list_checks.h"

namespace agora {

PageRunAllocator::PageRunAllocator(PageId first, PageId pages) : first_(first), pages_(pages), free_pages_(pages) {
  if (pages) free_[first] = pages;
}

PageId PageRunAllocator::allocate(PageId count) {
  if (count == 0 || count > free_pages_) return UINT64_MAX;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < count) continue;
    PageId first = it->first, rest = it->second - count;
    free_.erase(it);
    if (rest) free_[first + count] = rest;
    live_[first] = count;
    free_pages_ -= count;
    AGORA_ASSERT(free_lists_consistent_near(free_, live_, first, first_, first_ + pages_));
    return first;
  }
  return UINT64_MAX;
}

PageId PageRunAllocator::retire(PageId first, bool *inside) {
  *inside = false;
  auto it = live_.find(first);
  if (it == live_.end()) {
    auto after = live_.upper_bound(first);
    if (after != live_.begin()) *inside = first - std::prev(after)->first < std::prev(after)->second;
    return 0;
  }
  PageId count = it->second;
  live_.erase(it);
  return count;
}

void PageRunAllocator::release(PageId first, PageId count) {
  // Released once, after retire: in neither list (a second release would
  // count its pages twice).
  AGORA_ASSERT(count > 0 && range_outside_runs(free_, first, count) && range_outside_runs(live_, first, count));
  free_pages_ += count;
  AGORA_ASSERT(free_pages_ <= pages_);
  auto next = free_.lower_bound(first);
  if (next != free_.end() && first + count == next->first) {
    count += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == first) {
      prev->second += count;
      AGORA_ASSERT(free_lists_consistent_near(free_, live_, first, first_, first_ + pages_));
      return;
    }
  }
  free_[first] = count;
  AGORA_ASSERT(free_lists_consistent_near(free_, live_, first, first_, first_ + pages_));
}

}  // namespace agora
