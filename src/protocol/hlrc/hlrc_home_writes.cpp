// hlrc homes and their own writes. Without help from the host a shared home
// page is write-protected at every interval's start and its first write
// trapped (page_copy_share_home). A host that tracks writes
// (EngineHost::tracks_home_writes) reports the written pages instead, and
// the page stays writable: an owner computing on its pages takes no fault.
#include <algorithm>
#include <atomic>

#include "common/log.h"
#include "common/page_runs.h"
#include "common/stats.h"
#include "protocol/hlrc/hlrc_engine.h"

namespace agora {

void HlrcEngine::share_home(PageId page, PageState &s) {
  if (page_copy_share_home(host_, page, s)) s.tracked_after_drain = shared_drains_;
}

namespace {
void mark_home_written(std::vector<PageId> *dirty, PageId page, PageCopy &s) {
  if (s.dirty) return;
  s.dirty = true;  // close_interval raises its version and names it in the notice
  dirty->push_back(page);
}
}  // namespace

void HlrcEngine::collect_home_writes() {
  if (!host_.tracks_home_writes()) return;
  using Mutation = EngineOptions::HlrcMutation;
  std::vector<PageId> pages;
  // Pages one-sided readers copied without this home knowing. A reader
  // marks a page before reading its bytes, so a write of this home missing
  // from that copy came after the mark was made.
  //  - Marks seen now: the write came before tracking (which starts here,
  //    after this collection) or after; the conservative notice of this
  //    interval covers the former, tracking the latter.
  //  - A page tracked already: tracking began after collection k, and
  //    this mark is collection d's. A mark that collection d-1 did not see
  //    was made after it, and its read too; if k < d-1, tracking began
  //    before that, so every write the copy lacks is tracked. Otherwise
  //    (tracking began by message while the mark may have been pending) the
  //    page gets a conservative notice too. (On the runtime, marks and
  //    collections are concurrent; this is what makes the order safe.)
  host_.collect_newly_shared(&pages);
  const uint64_t drain = ++shared_drains_;
  std::vector<PageId> to_track;
  for (PageId page : pages) {
    if (!is_home(page) || !host_.page_allocated(page)) continue;
    PageState &s = state(page);
    if (s.writes_tracked && s.tracked_after_drain + 1 < drain) continue;
    if (!s.writes_tracked) {
      s.cached_elsewhere = true;
      s.writes_tracked = true;
      s.tracked_after_drain = drain;
      to_track.push_back(page);
    }
    if (options_.hlrc_mutation != Mutation::NewlySharedNoNotice) mark_home_written(&dirty_, page, s);
  }
  // In runs (a reader's sweep marks thousands at once): a write before
  // tracking starts is in this interval still, which notices every page.
  std::sort(to_track.begin(), to_track.end());
  for_each_page_run(to_track, [&](PageId first, PageId count) { host_.track_home_writes(first, count); });
  pages.clear();
  host_.collect_home_writes(&pages);
  for (PageId page : pages) {
    auto it = pages_.find(page);
    // Freed since (and maybe reused, not yet shared): nobody holds a copy.
    if (it == pages_.end() || !it->second.writes_tracked || !is_home(page)) continue;
    host_.stats().home_writes_tracked++;
    if (options_.hlrc_mutation != Mutation::HomeWriteNoNotice) mark_home_written(&dirty_, page, it->second);
  }
}

void HlrcEngine::publish_home_meta() {
  std::byte *meta = host_.home_meta();
  if (!meta || home_meta_bytes() > kHomeMetaBytes) return;
  for (Rank i = 0; i < host_.nranks() && i < (Rank)page_floor_.size(); ++i)
    applied_[i] = std::max(applied_[i], page_floor_[i]);
  AGORA_ASSERT((uintptr_t)meta % alignof(uint32_t) == 0);
  // The frames this vector describes are written before it: a reader that
  // reads it, then the pages, sees at least what it says.
  std::atomic_thread_fence(std::memory_order_release);
  uint32_t *entries = reinterpret_cast<uint32_t *>(meta);
  for (Rank i = 0; i < host_.nranks(); ++i)
    std::atomic_ref<uint32_t>(entries[i]).store(applied_[i], std::memory_order_relaxed);
}

}  // namespace agora
