// sc's read prefetch: a read miss that follows the previous one to the same
// home asks for the pages after it too, and the home grants at once, in its
// reply, those it can share without a transaction: idle entries owned by the
// home itself (whose copy it downgrades to read) or already shared. Pages
// owned by a third rank, or in a transaction, are left to their own misses.
// Granting a read copy of an idle entry is exactly what a read request for it
// would do at that moment, so every page still has one serialisation point
// and sequential consistency holds (docs/sc.md).
#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/sc/sc_engine.h"

namespace agora {

PageId ScEngine::extra_pages(PageId page, Rank home, Access need) {
  const Rank me = host_.rank();
  if (home < 0 || (need == Access::Read && home == me)) return 0;
  const uint32_t window = (need == Access::Write ? write_streams_ : read_streams_).on_miss(home, page);
  // Reads ask for pages this rank has no copy of; a remote write takes pages
  // it holds read copies of, as it does `page` (a run needs no data); the
  // home's own write takes pages in the state of `page` (so, at the home,
  // with the same copyset, which the home checks).
  Access state = Access::None;
  if (need == Access::Write) {
    state = local_access(page);
    if (home != me && state != Access::Read) return 0;
  }
  PageId n = 0;
  for (; n < window; ++n) {
    const PageId q = page + 1 + n;
    if (q < page || host_.home_of(q) != home || pending_.count(q) || local_access(q) != state) break;
  }
  return n;
}

void ScEngine::share_with(PageId page, DirEntry &e, Rank requester) {
  const Rank home = host_.rank();
  if (e.owner == home) {
    set_local(page, Access::Read);
    e.owner = -1;
    e.copyset[home] = true;
  }
  e.copyset[requester] = true;
}

bool ScEngine::prefetchable(PageId q, Rank requester) {
  const Rank home = host_.rank();
  if (q == 0 || host_.home_of(q) != home || !host_.page_allocated(q)) return false;
  DirEntry &e = entry(q);
  const bool broken = options_.mutation == EngineOptions::Mutation::ScPrefetchIgnoresState;
  if (e.owner >= 0 && e.owner != home) return broken;  // the mutation sends the home's stale frame
  if ((e.busy || !e.queue.empty()) && !broken) return false;
  share_with(q, e, requester);
  AGORA_ASSERT(broken || entry_consistent(q, e));
  return true;
}

void ScEngine::send_pages(Rank to, MsgHeader m, PageId first, PageId count) {
  const size_t ps = host_.page_size();
  bool contiguous = true;
  for (PageId i = 1; i < count && contiguous; ++i) contiguous = host_.frame(first + i) == host_.frame(first) + i * ps;
  if (contiguous) {
    host_.send(to, m, {host_.frame(first), count * ps});
    return;
  }
  std::vector<std::byte> pages(count * ps);
  for (PageId i = 0; i < count; ++i) std::memcpy(pages.data() + i * ps, host_.frame(first + i), ps);
  host_.send(to, m, {pages.data(), pages.size()});
}

void ScEngine::home_read_request(PageId page, Rank requester, PageId extra, uint64_t epoch) {
  extra = std::min<PageId>(extra, options_.prefetch_max);  // what a peer may ask is bounded here
  if (extra == 0 || !host_.page_allocated(page)) {
    home_request(page, {requester, Access::Read});
    return;
  }
  const Rank home = host_.rank();
  DirEntry &e = entry(page);
  const bool at_once = !e.busy && e.queue.empty() && (e.owner < 0 || e.owner == home);
  if (!at_once)
    home_request(page, {requester, Access::Read});  // its grant comes later
  else
    share_with(page, e, requester);
  PageId n = 0;
  while (n < extra && prefetchable(page + 1 + n, requester)) ++n;
  if (at_once) {
    send_pages(requester, {Channel::Protocol, kReadGrantRun, 0, page, n + 1, epoch}, page, n + 1);
    AGORA_ASSERT(entry_consistent(page, e));
  } else if (n > 0) {
    send_pages(requester, {Channel::Protocol, kPrefetchGrant, 0, page + 1, n, epoch}, page + 1, n);
  }
}

void ScEngine::install_prefetched(PageId first, PageId count, const std::byte *data, uint64_t epoch) {
  // A forget since the request: some of these pages may have been freed (and
  // zeroed here) after the home sent them. Dropping them is safe: the home
  // may still list this rank as a reader, which costs at most an
  // invalidation, and a later write request says it holds no copy.
  if (epoch != forget_epoch_) return;
  const size_t ps = host_.page_size();
  for (PageId i = 0; i < count; ++i) {
    const PageId q = first + i;
    // Asked for only while invalid and not pending; a request made since
    // then is answered after this reply (same pair, in order) and finds the
    // copy installed.
    if (local_access(q) != Access::None || writing_back_.count(q)) continue;
    std::memcpy(host_.frame(q), data + i * ps, ps);  // before opening the protection
    set_local(q, Access::Read);
    host_.stats().pages_fetched++;
    host_.stats().pages_prefetched++;
  }
}

}  // namespace agora
