// Refresh at barriers: the halo misses of owner-computes codes, batched.
//
// An owner-computes program (jacobi, sor, nbody, em3d) reads the same pages
// of its neighbours in every phase, and every barrier's notices invalidate
// them again, so each phase starts with one miss per page (or per prefetch
// run), each a fault and a round trip taken while the home computes. A page
// this rank fetched again (missed, or prefetched along a miss) after a
// notice had invalidated it is *hot*; when a
// barrier's notices invalidate a hot page again, the barrier's end fetches
// it at once, with its neighbours in runs (one read or one message per run),
// as a prefetch: the copy goes through the same version check as any reply,
// and a thread that touches the page before it arrives waits for it.
//
// Why it stays cheap when the pattern changes: a page is refreshed at most
// kRefreshesUnconfirmed times in a row unless a thread of this rank is seen
// to want it (a fault on it while a fetch ahead is in flight); after that
// it is left invalid once, and only a miss makes it hot again. A page the
// rank stopped reading so costs at most that many wasted fetches.
//
// Only pages invalidated by a barrier's notices are refreshed: notices that
// come with a lock grant concern data passed between critical sections,
// where refetching what the next holder may not read would only add traffic.
// Dirty copies are left to their miss (2-way diffing at the refetch).
#include <algorithm>

#include "common/stats.h"
#include "protocol/hlrc/hlrc_engine.h"

namespace agora {

namespace {
// Refreshes of a page without a sign that it is still read (see above).
constexpr uint8_t kRefreshesUnconfirmed = 32;
}  // namespace

void HlrcEngine::note_refetched(PageState &s, bool refreshed) {
  if (s.stale && !refreshed) {  // missed (or prefetched along a miss) after a notice
    s.hot = true;
    s.refreshes = 0;
  }
  s.stale = false;
}

void HlrcEngine::note_wanted(PageState &s) { s.refreshes = 0; }

void HlrcEngine::note_invalidated(PageId page, PageState &s) {
  s.stale = true;
  if (merging_barrier_ && s.hot && !s.dirty && options_.refresh) refresh_.push_back(page);
}

void HlrcEngine::refresh_hot_pages() {
  if (refresh_.empty()) return;
  std::vector<PageId> queued;
  queued.swap(refresh_);
  std::sort(queued.begin(), queued.end());
  queued.erase(std::unique(queued.begin(), queued.end()), queued.end());
  std::vector<PageId> due;
  for (PageId page : queued) {
    auto it = pages_.find(page);  // freed meanwhile: forgotten
    if (it == pages_.end()) continue;
    PageState &s = it->second;
    // Missed (or refreshed) again since it was queued, or written: leave it.
    if (s.access != Access::None || s.fetching || s.dirty || s.writing_back || !s.hot) continue;
    if (++s.refreshes > kRefreshesUnconfirmed) {
      s.hot = false;
      s.refreshes = 0;
      continue;
    }
    due.push_back(page);
  }
  // Runs of consecutive pages with one home: one fetch each.
  for (size_t i = 0; i < due.size();) {
    const Rank home = host_.home_of(due[i]);
    size_t j = i + 1;
    while (j < due.size() && j - i < kMaxRefreshRun && due[j] == due[j - 1] + 1 && host_.home_of(due[j]) == home) ++j;
    for (size_t k = i; k < j; ++k) pages_[due[k]].refreshing = true;
    fetch_run(due[i], (uint32_t)(j - i));
    i = j;
  }
}

}  // namespace agora
