// Home write tracking (HomeWrites, home_writes.h): the kernel records this
// rank's writes to its home pages in the application view, so an engine
// can leave them writable instead of trapping the first write of each.
// Writes the runtime makes through the service view (installing diffs,
// pages received) are not the application's and are not reported.
#include "runtime/home_writes/home_writes.h"

#include <algorithm>

#include "common/log.h"

namespace agora {

void HomeWrites::open(const Config &config) {
  if (config.home_writes == HomeWritesMode::Trap) {
    log_debug("home writes: write-protect traps (AGORA_HOME_WRITES=trap)");
    return;
  }
  if (config.profile) {
    // The profile learns who writes which words of a page from the write
    // faults (false vs true sharing): untrapped home writes would hide the
    // home from it. Profiling therefore keeps the traps, and with them the
    // message path for pages (one-sided reads need tracked home writes).
    log_debug("home writes: write-protect traps (AGORA_PROFILE observes writes by their faults)");
    return;
  }
  std::string why;
  const bool sync_only = config.home_writes == HomeWritesMode::Sync;
  if (tracker_.open(&why, sync_only)) {
    log_debug("home writes: tracked by the kernel (%s)",
              tracker_.mode() == platform::WriteTracker::Mode::Async
                  ? "userfaultfd asynchronous write-protect, PAGEMAP_SCAN"
                  : "userfaultfd write-protect, faults resolved by the tracker's thread");
    // The whole view at once: registering page by page would split its
    // mapping at every tracked page (docs/cache.md).
    std::string error;
    if (!tracker_.register_whole(host_.range().app_view, host_.range().size, &error)) {
      log_debug("home writes: write-protect traps; registering the view failed: %s", error.c_str());
      tracker_.close();
    }
  } else if (sync_only) {
    // Asked for by name (tests, measurements): not silently replaced by traps.
    fatal("AGORA_HOME_WRITES=sync: the kernel cannot track home writes synchronously here: %s", why.c_str());
  } else {
    log_debug("home writes: write-protect traps; the kernel cannot track them here: %s", why.c_str());
  }
}

void HomeWrites::for_each_view_run(PageId first, PageId count,
                                   const std::function<void(std::byte *, size_t)> &fn) const {
  const size_t page = host_.page_size();
  const platform::GlobalRange &range = host_.range();
  PageId range_pages = range.size / page;
  if (first < range_pages && count <= range_pages - first) {
    fn(range.app_view + first * page, count * page);
    return;
  }
  // Program mode's windows: pages after the range's, at the executable's
  // addresses (consecutive ids are consecutive addresses within a window).
  for (PageId p = first, end = first + count; p < end;) {
    uintptr_t addr = host_.space().addr_of(p);
    PageId n = 1;
    while (p + n < end && host_.space().addr_of(p + n) == addr + n * page) ++n;
    fn((std::byte *)addr, n * page);
    p += n;
  }
}

void HomeWrites::track(PageId first, PageId count) {
  if (!tracker_.available() || count == 0) return;
  PageId last = first + count - 1;
  if (last < first || host_.space().home_of(first) != host_.rank() || host_.space().home_of(last) != host_.rank())
    fatal("track_home_writes(%llu, %llu): not a run of this rank's home pages (an engine bug)",
          (unsigned long long)first, (unsigned long long)count);
  // Arm only the pages not tracked yet: arming a tracked page again would
  // drop a write to it not yet collected.
  std::string error;
  auto arm = [&](PageId gap_first, PageId gap_end) {
    if (gap_first >= gap_end) return;
    for_each_view_run(gap_first, gap_end - gap_first, [&](std::byte *addr, size_t len) {
      // The engine leaves these pages writable on the strength of this: a
      // failure here would lose writes, so it ends the job.
      if (!tracker_.track(addr, len, &error))
        fatal("cannot track writes to home pages %p..+%zu: %s (set AGORA_HOME_WRITES=trap)", (void *)addr, len,
              error.c_str());
    });
  };
  PageId cursor = first, end = first + count;
  auto run = tracked_runs_.upper_bound(first);
  if (run != tracked_runs_.begin()) --run;
  for (; run != tracked_runs_.end() && run->first < end; ++run) {
    if (run->first + run->second <= cursor) continue;
    arm(cursor, std::min(run->first, end));
    cursor = std::max(cursor, run->first + run->second);
  }
  arm(cursor, end);
  // Coalesce with the runs it overlaps or touches.
  PageId lo = first, hi = first + count;
  auto it = tracked_runs_.upper_bound(lo);
  if (it != tracked_runs_.begin() && std::prev(it)->first + std::prev(it)->second >= lo) --it;
  while (it != tracked_runs_.end() && it->first <= hi) {
    lo = std::min(lo, it->first);
    hi = std::max(hi, it->first + it->second);
    it = tracked_runs_.erase(it);
  }
  tracked_runs_[lo] = hi - lo;
}

void HomeWrites::untrack(PageId first, PageId count) {
  if (!tracker_.available() || count == 0) return;
  PageId end = first + count;
  auto it = tracked_runs_.upper_bound(first);
  if (it != tracked_runs_.begin()) --it;
  bool touched = false;
  while (it != tracked_runs_.end() && it->first < end) {
    PageId run_first = it->first, run_end = it->first + it->second;
    if (run_end <= first) {
      ++it;
      continue;
    }
    touched = true;
    it = tracked_runs_.erase(it);
    if (run_first < first) tracked_runs_[run_first] = first - run_first;
    if (run_end > end) tracked_runs_[end] = run_end - end;
  }
  if (!touched) return;
  std::string error;
  for_each_view_run(first, count, [&](std::byte *addr, size_t len) {
    if (!tracker_.untrack(addr, len, &error))
      log_debug("untracking freed pages %p..+%zu: %s", (void *)addr, len, error.c_str());
  });
}

void HomeWrites::collect(std::vector<PageId> *written) {
  if (!tracker_.available()) return;
  std::vector<platform::WriteTracker::Run> runs;
  std::string error;
  for (const auto &[first, count] : tracked_runs_) {
    runs.clear();
    for_each_view_run(first, count, [&](std::byte *addr, size_t len) {
      if (!tracker_.collect(addr, len, &runs, &error))
        fatal("cannot read which home pages were written (%p..+%zu): %s (set AGORA_HOME_WRITES=trap)", (void *)addr,
              len, error.c_str());
    });
    for (const auto &run : runs) {
      PageId page = host_.space().page_of(run.addr);
      for (size_t i = 0; i < run.pages; ++i) {
        // A page freed since it was tracked is no concern of the engine's.
        if (!host_.page_allocated(page + i)) continue;
        written->push_back(page + i);  // the engine counts home_writes_tracked
      }
    }
  }
}

}  // namespace agora
