// regc homes and their own writes. Without help from the host a home page
// another rank holds a copy of is write-protected at every interval's start
// and its first write trapped (page_copy_share_home); under `regc` the trap
// also takes a twin, so that the home's span stores travel as updates. Each
// such page alternates protection with its neighbours and is a mapping of
// its own: a rank homing more shared pages than vm.max_map_count allows
// could not protect them (docs/cache.md, "The kernel's mapping limit").
//
// A host that tracks writes (EngineHost::tracks_home_writes: the kernel's
// userfaultfd write-protect and PAGEMAP_SCAN, or the simulator's record)
// reports the written pages instead and the page stays writable, as under
// hlrc (hlrc_home_writes.cpp). No fault means no twin taken at the first
// write; under `regc-page` that loses nothing (entries are notices). Under
// `regc` a page the home keeps writing gets a *standing twin* instead: the
// first interval that writes it makes a notice and keeps the page as it is
// then; each later one diffs against it, so the home's span stores travel
// as updates as with traps (docs/regc.md, "A home's own writes"). There are
// at most kStandingTwinsMax standing twins; the oldest goes to make room.
//
// Why taking the twins this way loses no write, with other application
// threads storing while the interval closes (a store is reported by the
// collection that follows the moment it lands in memory):
//  - a page with a standing twin: the frame is copied first, and the diff
//    and the next twin are that copy's. A store landing before the copy is
//    in this diff; after it, it is reported next time and, missing from the
//    new twin, in the next diff.
//  - a page without one: its entry is a notice, so every copy of the version
//    it names is fetched after this close, and holds whatever the new twin
//    (taken now, under the engine) holds.
//  - a copy served while the frame may hold writes not yet in an entry
//    (note_served): a byte written and restored before the next close would
//    be in that copy and in no diff, so that entry is a notice.
//
// Unlike hlrc, regc never lets a page leave its home without the home's CPU
// (no read_remote: every copy is served by home_serve, under the engine), so
// tracking starts in page_copy_share_home before the first copy is taken and no page
// is ever shared behind the engine's back: collect_newly_shared is not needed.
#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/regc/regc_engine.h"
#include "protocol/shared/page_diff.h"

namespace agora {

void RegcEngine::collect_home_writes() {
  if (!host_.tracks_home_writes()) return;
  std::vector<PageId> pages;
  host_.collect_home_writes(&pages);
  for (PageId page : pages) {
    auto it = pages_.find(page);
    // Freed since (and maybe reused, not yet shared): nobody holds a copy.
    if (it == pages_.end() || !it->second.writes_tracked || !is_home(page)) continue;
    PageState &s = it->second;
    host_.stats().home_writes_tracked++;
    if (s.dirty || options_.mutation == EngineOptions::Mutation::RegcHomeWriteNoNotice) continue;
    s.dirty = true;  // close_interval numbers its next version and makes its entry (a notice)
    dirty_.push_back(page);
  }
}

bool RegcEngine::diff_home_written(PageId page, PageState &s, std::vector<std::byte> *diff) {
  if (!fine_grain()) return false;  // regc-page: notices only
  const size_t size = host_.page_size();
  const std::byte *frame = host_.frame(page);
  if (s.standing.empty()) {
    while (standing_.size() >= kStandingTwinsMax && !standing_order_.empty()) {
      const PageId oldest = standing_order_.front();
      standing_order_.pop_front();
      if (!standing_.erase(oldest)) continue;  // freed since
      PageState &o = state(oldest);
      o.standing.clear();
      o.standing.shrink_to_fit();
    }
    s.standing.assign(frame, frame + size);
    s.served_unpublished = false;
    standing_.insert(page);
    standing_order_.push_back(page);
    host_.stats().twins++;
    return false;  // this entry is a notice
  }
  std::vector<std::byte> now(frame, frame + size);  // first: see the top of this file
  page_diff_encode(now.data(), s.standing.data(), size, diff);
  s.standing.swap(now);
  host_.stats().twins++;
  const bool exact = !s.served_unpublished;
  s.served_unpublished = false;
  return exact;
}

void RegcEngine::note_served(PageState &s, const std::byte *copy) {
  // The base the next diff is taken against: the trapped page's twin, or the
  // tracked page's standing twin. A copy equal to it is the page's current
  // version exactly.
  const std::vector<std::byte> &base = !s.twin.empty() ? s.twin : s.standing;
  if (!base.empty() && std::memcmp(base.data(), copy, host_.page_size()) == 0) return;
  if (options_.mutation == EngineOptions::Mutation::RegcStandingTwinRebased && s.twin.empty()) {
    s.standing.assign(copy, copy + host_.page_size());  // the planted bug
    return;
  }
  s.served_unpublished = true;
}

}  // namespace agora
