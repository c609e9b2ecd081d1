// hlrc and freed memory: every rank drops the pages' state (copies, twins,
// pending fetches, the open interval's dirty marks, so no diff of freed
// memory is ever sent); the homes hand their versions up as the floor that
// the pages' next homes start from.
#include <algorithm>

#include "common/status.h"
#include "protocol/hlrc/hlrc_engine.h"

namespace agora {

namespace {
constexpr int kStatusFreed = AGORA_ERR_BAD_POINTER;  // a use after free
}

void HlrcEngine::forget_pages(PageId first, PageId count, std::vector<uint32_t> *floor) {
  auto in_range = [&](PageId p) { return p - first < count; };
  std::vector<PageId> gone;
  if (count <= pages_.size()) {
    for (PageId p = first; p < first + count; ++p)
      if (pages_.count(p)) gone.push_back(p);
  } else {
    for (const auto &entry : pages_)
      if (in_range(entry.first)) gone.push_back(entry.first);
  }
  for (PageId p : gone) {
    PageState &s = pages_[p];
    if (is_home(p))
      for (Rank i = 0; i < (Rank)s.version.size(); ++i) vector_time_raise(floor, host_.nranks(), i, s.version[i]);
    for (Waiter *w : s.waiters) w->complete(kStatusFreed);
    pages_.erase(p);
  }
  dirty_.erase(std::remove_if(dirty_.begin(), dirty_.end(), in_range), dirty_.end());
  flush_.forget(first, count);
}

void HlrcEngine::raise_page_floor(const std::vector<uint32_t> &floor) {
  for (Rank i = 0; i < (Rank)floor.size() && i < host_.nranks(); ++i)
    vector_time_raise(&page_floor_, host_.nranks(), i, floor[i]);
  publish_home_meta();  // one-sided readers check against the floor too
}

}  // namespace agora
