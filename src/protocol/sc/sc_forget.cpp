// sc and freed memory: every rank drops its copies' state and requests in
// flight, the home its directory entries; the pages start over as if never
// touched (owned by their next home).
#include "protocol/sc/sc_engine.h"

#include "common/status.h"

namespace agora {

namespace {
constexpr int kStatusFreed = AGORA_ERR_BAD_POINTER;  // a use after free

// Calls fn on every key of map in [first, first+count), walking whichever is
// smaller: the range or the map (which holds only pages touched).
template <typename Map, typename Fn>
void for_each_in_range(Map &map, PageId first, PageId count, Fn fn) {
  if (count <= map.size()) {
    for (PageId p = first; p < first + count; ++p)
      if (auto it = map.find(p); it != map.end()) fn(it);
    return;
  }
  for (auto it = map.begin(); it != map.end(); ++it)
    if (it->first - first < count) fn(it);
}
}  // namespace

void ScEngine::forget_pages(PageId first, PageId count, std::vector<uint32_t> *floor) {
  (void)floor;      // sc keeps no version that outlives a page
  forget_epoch_++;  // replies to requests made before now may name these pages
  std::vector<PageId> gone;
  for_each_in_range(pending_, first, count, [&](auto it) { gone.push_back(it->first); });
  for (PageId p : gone) fail_local(p, kStatusFreed);
  gone.clear();
  for_each_in_range(directory_, first, count, [&](auto it) { gone.push_back(it->first); });
  for (PageId p : gone) {
    // Transactions still queued came from accesses racing with the free.
    DirEntry &e = directory_[p];
    if (e.run_pages > 1) home_abandon_run(p, e);
    if (e.busy) e.queue.push_front(e.current);
    for (const Request &r : e.queue)
      if (r.requester != host_.rank())
        host_.send(r.requester, {Channel::Protocol, kNack, 0, p, (uint64_t)(int64_t)kStatusFreed, 0});
    directory_.erase(p);
  }
  gone.clear();
  for_each_in_range(access_, first, count, [&](auto it) { gone.push_back(it->first); });
  for (PageId p : gone) access_.erase(p);
  gone.clear();
  for_each_in_range(writing_back_, first, count, [&](auto it) { gone.push_back(it->first); });
  for (PageId p : gone) {
    for (Waiter *w : writing_back_[p].waiters) w->complete(kStatusFreed);
    writing_back_.erase(p);  // its acknowledgement, if it comes, finds nothing
  }
}

}  // namespace agora
