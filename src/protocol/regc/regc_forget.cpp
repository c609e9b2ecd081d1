// regc and freed memory: every rank drops the pages' state (copies, twins,
// pending fetches, dirty marks, so no diff of freed memory is sent); homes
// hand their versions up as the floor the pages' next homes start from, so
// an entry about freed memory still travelling never makes a fetch of the
// reused pages wait for a version that will not come.
#include <algorithm>

#include "common/status.h"
#include "protocol/regc/regc_engine.h"

namespace agora {

namespace {
constexpr int kStatusFreed = AGORA_ERR_BAD_POINTER;  // a use after free
}

void RegcEngine::forget_pages(PageId first, PageId count, std::vector<uint32_t> *floor) {
  auto in_range = [&](PageId p) { return p - first < count; };
  uint64_t highest = 0;
  std::vector<PageId> gone;
  for (const auto &entry : pages_)
    if (in_range(entry.first)) gone.push_back(entry.first);
  for (PageId p : gone) {
    PageState &s = pages_[p];
    if (is_home(p)) highest = std::max(highest, s.version);
    for (Waiter *w : s.waiters) w->complete(kStatusFreed);
    pages_.erase(p);
    early_pages_.erase(p);
    standing_.erase(p);
  }
  dirty_.erase(std::remove_if(dirty_.begin(), dirty_.end(), in_range), dirty_.end());
  // The floor is one entry per rank; regc needs one number: every entry carries it.
  if (floor->empty()) floor->assign(host_.nranks(), 0);
  for (uint32_t &f : *floor) f = std::max<uint32_t>(f, (uint32_t)std::min<uint64_t>(highest, UINT32_MAX));
  flush_.forget(first, count);
}

void RegcEngine::raise_page_floor(const std::vector<uint32_t> &floor) {
  for (uint32_t f : floor) page_floor_ = std::max<uint64_t>(page_floor_, f);
}

}  // namespace agora
