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
// hlrc (hlrc_home_writes.cpp). A tracked page has no twin, so its entry is
// a notice: a copy elsewhere is invalidated and fetched again rather than
// patched (correct under both protocols; docs/protocols.md measures what it
// costs `regc`'s lock-carried updates).
//
// Unlike hlrc, regc never lets a page leave its home without the home's CPU
// (no read_remote: every copy is served by home_serve, under the engine), so
// tracking starts in share_home before the first copy is taken and no page
// is ever shared behind the engine's back: collect_newly_shared is not needed.
#include "common/log.h"
#include "common/stats.h"
#include "protocol/regc/regc_engine.h"

namespace agora {

void RegcEngine::share_home(PageId page, PageState &s) {
  if (!host_.tracks_home_writes()) {
    page_copy_share_home(host_, page, s);
    return;
  }
  if (s.cached_elsewhere) return;
  // Tracking starts before the copy is taken (home_serve copies after this
  // returns), so a write the copy may lack is reported and noticed.
  s.cached_elsewhere = true;
  s.writes_tracked = true;
  host_.track_home_writes(page, 1);
}

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

}  // namespace agora
