// The bounded cache of remote pages (docs/cache.md): what bounds it, how it
// learns which copies this rank holds (every protection change of a page
// homed elsewhere passes through the runtime's set_access_run, which calls
// note), and when it evicts (between engine calls: after each protocol
// message and each completed one-sided read, the only events that install
// copies). An evicted copy's frame goes back to the frame pool
// (copy_cache_frames.cpp) or, outside it, is discarded: the memory goes
// back to the system. Either way the view's mappings merge again.
#include "runtime/cache/copy_cache.h"

#include <algorithm>
#include <cstdlib>

#include "common/log.h"
#include "common/page_runs.h"

namespace agora {

namespace {
// Mappings left for everything else a rank maps (libraries, stacks, home
// pages protected apart) when the kernel's limit bounds the cache.
constexpr uint64_t kMapsReserved = 8192;
// Most copies one trim evicts below the bound (a sixteenth of the cache at most).
constexpr size_t kTrimBatch = 64;
}  // namespace

bool CopyCache::open(const Config &config, uint64_t map_limit, bool reclaims_home, bool memory_server,
                     std::string *error) {
  const uint64_t page = host_.page_size();
  // Each copy whose protection differs from both neighbours' splits a
  // mapping in three: at most two more mappings per copy.
  const uint64_t limit = map_limit;
  uint64_t by_maps = limit > 2 * kMapsReserved ? (limit - kMapsReserved) / 2 : limit / 4;
  const uint64_t least = std::max<uint64_t>(kCacheMinPages, 16ull * config.threads_per_rank);
  // Half the mappings for copies of remote pages, half for home pages
  // protected apart (sc: shared or owned elsewhere), which the engine can
  // take back (reclaim_home).
  const uint64_t for_homes = reclaims_home ? by_maps / 2 : 0;
  if (for_homes) home_apart_.emplace(for_homes, CachePolicy::Fifo, 16);
  by_maps -= for_homes;
  uint64_t pages = config.cache_bytes / page;
  if (config.cache_bytes) {
    if (pages < least) {
      const char *text = std::getenv("AGORA_CACHE");
      *error = "AGORA_CACHE=" + std::string(text ? text : std::to_string(config.cache_bytes)) + " holds " +
               std::to_string(pages) + " pages of " + std::to_string(page) + " bytes; the cache needs at least " +
               std::to_string(least) + " (" + human_bytes(least * page) +
               ": 64 pages, and 16 per thread a rank runs, AGORA_THREADS_PER_RANK=" +
               std::to_string(config.threads_per_rank) + ") so that every thread can hold what one access touches";
      return false;
    }
    if (by_maps && pages > by_maps) {
      if (host_.rank() == 0)
        log_error(
            "AGORA_CACHE: %llu pages is more than vm.max_map_count=%llu allows separately protected; "
            "the cache holds %llu pages (raise vm.max_map_count for more)",
            (unsigned long long)pages, (unsigned long long)limit, (unsigned long long)by_maps);
      pages = by_maps;
    }
  } else {
    pages = by_maps;  // unset: unbounded but for the kernel (0 if it does not say)
  }
  if (pages == 0) return true;
  copies_.emplace(pages, config.cache_policy, std::max<size_t>(16, pages / 4));
  open_frame_pool(config, pages, memory_server);
  log_debug("cache of remote pages: %llu pages (%s), policy %s", (unsigned long long)pages,
            config.cache_bytes ? "AGORA_CACHE" : "vm.max_map_count",
            config.cache_policy == CachePolicy::Clock ? "clock" : "fifo");
  return true;
}

void CopyCache::note(PageId first, PageId count, Access access) {
  if (!copies_ && !home_apart_) return;
  const Rank me = host_.rank();
  const Access home = host_.home_access();
  for (PageId p = first; p < first + count; ++p) {
    if (host_.home_of(p) != me) {
      if (copies_) copies_->note_access(p, access);
      // A pooled copy closed: its slot may go back (release_unused_frames).
      if (access == Access::None && slots_ && slots_->slot_of(p) != FrameSlots::kNone) closed_copies_.push_back(p);
    } else if (home_apart_) {
      home_apart_->note_access(p, access != home ? Access::Read : Access::None);
      if (access == home) reclaiming_.erase(p);
    }
  }
  if (copies_) {
    Stats &stats = host_.stats();
    stats.cache_resident_peak = std::max<uint64_t>(stats.cache_resident_peak, copies_->resident());
  }
}

bool CopyCache::defer(PageId first, PageId count, Access access) {
  if (!defer_clean_eviction_ || access != Access::None) return false;
  for (PageId p = first; p < first + count; ++p) deferred_none_.push_back(p);
  return true;
}

void CopyCache::forget(PageId first, PageId count) {
  forget_frames(first, count);
  for (PageId p = first; p < first + count; ++p) {
    if (copies_) copies_->note_access(p, Access::None);
    if (home_apart_) home_apart_->note_access(p, Access::None);
    reclaiming_.erase(p);
  }
}

void CopyCache::protect_in_runs(std::vector<PageId> *pages, Access access) {
  std::sort(pages->begin(), pages->end());
  for_each_page_run(*pages, [&](PageId first, PageId count) { host_.protect_run(first, count, access); });
}

void CopyCache::trim() {
  // Home pages first: a reclaim finishes later (the readers' acks), so
  // those under way count as gone.
  if (home_apart_) {
    for (size_t tries = 2 * home_apart_->resident() + 2;
         home_apart_->resident() - std::min(home_apart_->resident(), reclaiming_.size()) > home_apart_->capacity() &&
         tries > 0;
         --tries) {
      PageId page;
      if (!home_apart_->propose(&page)) break;
      if (!reclaiming_.count(page) && host_.reclaim_home(page)) {
        if (host_.local_access(page) != host_.home_access()) reclaiming_.insert(page);
        host_.stats().cache_home_reclaims++;
      }
    }
  }
  if (slots_) {
    end_landing();  // the message that reserved a run for its copies is done
    release_unused_frames();
  }
  if (!copies_ || !copies_->over()) return;
  // Once over, a batch goes below the bound, so that the protection changes
  // and frame discards come in runs (a sweep evicts in install order).
  const size_t target = copies_->capacity() - std::min<size_t>(copies_->capacity() / 16, kTrimBatch);
  std::vector<PageId> gone;
  // The batch is chosen first, and its written copies are made read-only
  // in runs, so that every victim's protection change can wait and go with
  // its neighbours': until then threads read valid data and cannot write
  // (a written copy must not change while the engine takes its diff). On a
  // sweep that writes (STREAM's a[]) this saves an mprotect per written copy.
  std::vector<PageId> batch, downgraded;
  while (batch.size() < copies_->resident() - target) {
    PageId victim;
    if (!copies_->propose(&victim) || std::find(batch.begin(), batch.end(), victim) != batch.end()) break;
    batch.push_back(victim);
    if (host_.local_access(victim) == Access::Write) downgraded.push_back(victim);
  }
  protect_in_runs(&downgraded, Access::Read);
  defer_clean_eviction_ = true;
  for (PageId victim : batch) {
    if (host_.evict(victim) != ProtocolEngine::Eviction::Busy) {
      gone.push_back(victim);
    } else if (std::binary_search(downgraded.begin(), downgraded.end(), victim) &&
               host_.local_access(victim) == Access::Write) {
      host_.protect_run(victim, 1, Access::Write);  // stays: writable again
    }
  }
  // Busy copies (in flight, waited on) are passed over: then one at a
  // time, at most two passes. A clean copy's protection change may still
  // wait; a written copy is protected at once, before the engine takes its diff.
  for (size_t tries = 2 * copies_->resident() + 2; copies_->resident() > target && tries > 0; --tries) {
    PageId victim;
    if (!copies_->propose(&victim)) break;
    defer_clean_eviction_ = host_.local_access(victim) == Access::Read;
    if (host_.evict(victim) != ProtocolEngine::Eviction::Busy) gone.push_back(victim);
  }
  defer_clean_eviction_ = false;
  host_.end_evictions();
  // Pooled copies among them are closed by mapping the memory file back.
  if (pool_frames_held())
    deferred_none_.erase(std::remove_if(deferred_none_.begin(), deferred_none_.end(),
                                        [&](PageId p) { return slots_->mapped(p); }),
                         deferred_none_.end());
  protect_in_runs(&deferred_none_, Access::None);
  deferred_none_.clear();
  // The engine took what it needed from the frames: slots go back to the
  // pool, other frames' memory to the system.
  std::sort(gone.begin(), gone.end());
  if (slots_) {
    std::vector<PageId> unpooled;
    release_frames(gone, &unpooled);
    gone.swap(unpooled);
  }
  for_each_page_run(gone, [&](PageId first, PageId count) { host_.discard_frames(first, count); });
}

}  // namespace agora
