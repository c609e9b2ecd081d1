// The runtime's side of the bounded cache of remote pages (docs/cache.md):
// what bounds it, how it learns which copies this rank holds (every
// protection change of a page homed elsewhere passes through
// set_access_run), and when it evicts (between engine calls: after each
// protocol message and each completed one-sided read, the only events that
// install copies). An evicted copy's frame goes back to the frame pool
// (runtime_frame_pool.cpp) or, outside it, is discarded: the memory goes
// back to the system. Either way the view's mappings merge again.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "common/page_runs.h"
#include "runtime/runtime.h"

namespace agora {

namespace {
// Mappings left for everything else a rank maps (libraries, stacks, home
// pages protected apart) when the kernel's limit bounds the cache.
constexpr uint64_t kMapsReserved = 8192;
// Most copies one trim evicts below the bound (a sixteenth of the cache at most).
constexpr size_t kTrimBatch = 64;
}  // namespace

bool Runtime::open_cache(std::string *error) {
  const uint64_t page = page_size();
  // Each copy whose protection differs from both neighbours' splits a
  // mapping in three: at most two more mappings per copy.
  const uint64_t limit = platform::vm_map_limit();
  uint64_t by_maps = limit > 2 * kMapsReserved ? (limit - kMapsReserved) / 2 : limit / 4;
  const uint64_t least = std::max<uint64_t>(kCacheMinPages, 16ull * config_.threads_per_rank);
  // Half the mappings for copies of remote pages, half for home pages
  // protected apart (sc: shared or owned elsewhere), which the engine can
  // take back (reclaim_home).
  const uint64_t for_homes = engine_->reclaims_home() ? by_maps / 2 : 0;
  if (for_homes) home_apart_.emplace(for_homes, CachePolicy::Fifo, 16);
  by_maps -= for_homes;
  uint64_t pages = config_.cache_bytes / page;
  if (config_.cache_bytes) {
    if (pages < least) {
      const char *text = std::getenv("AGORA_CACHE");
      *error = "AGORA_CACHE=" + std::string(text ? text : std::to_string(config_.cache_bytes)) + " holds " +
               std::to_string(pages) + " pages of " + std::to_string(page) + " bytes; the cache needs at least " +
               std::to_string(least) + " (" + platform::human_bytes(least * page) +
               ": 64 pages, and 16 per thread a rank runs, AGORA_THREADS_PER_RANK=" +
               std::to_string(config_.threads_per_rank) + ") so that every thread can hold what one access touches";
      return false;
    }
    if (by_maps && pages > by_maps) {
      if (rank() == 0)
        log_error("AGORA_CACHE: %llu pages is more than vm.max_map_count=%llu allows separately protected; "
                  "the cache holds %llu pages (raise vm.max_map_count for more)",
                  (unsigned long long)pages, (unsigned long long)limit, (unsigned long long)by_maps);
      pages = by_maps;
    }
  } else {
    pages = by_maps;  // unset: unbounded but for the kernel (0 if it does not say)
  }
  if (pages == 0) return true;
  cache_.emplace(pages, config_.cache_policy, std::max<size_t>(16, pages / 4));
  open_frame_pool(pages);
  log_debug("cache of remote pages: %llu pages (%s), policy %s", (unsigned long long)pages,
            config_.cache_bytes ? "AGORA_CACHE" : "vm.max_map_count",
            config_.cache_policy == CachePolicy::Clock ? "clock" : "fifo");
  return true;
}

void Runtime::cache_note(PageId first, PageId count, Access access) {
  if (!cache_ && !home_apart_) return;
  const Rank me = rank();
  const Access home = engine_->home_access();
  for (PageId p = first; p < first + count; ++p) {
    if (space_->home_of(p) != me) {
      if (cache_) cache_->note_access(p, access);
      // A pooled copy closed: its slot may go back (release_unused_frames).
      if (access == Access::None && frame_slots_ && frame_slots_->slot_of(p) != FrameSlots::kNone)
        closed_copies_.push_back(p);
    } else if (home_apart_) {
      home_apart_->note_access(p, access != home ? Access::Read : Access::None);
      if (access == home) reclaiming_.erase(p);
    }
  }
  if (cache_) stats_.cache_resident_peak = std::max<uint64_t>(stats_.cache_resident_peak, cache_->resident());
}

void Runtime::cache_forget(PageId first, PageId count) {
  forget_frames(first, count);
  for (PageId p = first; p < first + count; ++p) {
    if (cache_) cache_->note_access(p, Access::None);
    if (home_apart_) home_apart_->note_access(p, Access::None);
    reclaiming_.erase(p);
  }
}

void Runtime::protect_in_runs(std::vector<PageId> *pages, Access access) {
  std::sort(pages->begin(), pages->end());
  for_each_page_run(*pages, [&](PageId first, PageId count) { protect_run(first, count, access); });
}

void Runtime::cache_trim() {
  // Home pages first: a reclaim finishes later (the readers' acks), so
  // those under way count as gone.
  if (home_apart_) {
    for (size_t tries = 2 * home_apart_->resident() + 2;
         home_apart_->resident() - std::min(home_apart_->resident(), reclaiming_.size()) > home_apart_->capacity() &&
         tries > 0;
         --tries) {
      PageId page;
      if (!home_apart_->propose(&page)) break;
      if (!reclaiming_.count(page) && engine_->reclaim_home(page)) {
        if (engine_->local_access(page) != engine_->home_access()) reclaiming_.insert(page);
        stats_.cache_home_reclaims++;
      }
    }
  }
  if (frame_slots_) {
    end_landing();  // the message that reserved a run for its copies is done
    release_unused_frames();
  }
  if (!cache_ || !cache_->over()) return;
  const size_t page = page_size();
  // Once over, a batch goes below the bound, so that the protection changes
  // and frame discards come in runs (a sweep evicts in install order).
  const size_t target = cache_->capacity() - std::min<size_t>(cache_->capacity() / 16, kTrimBatch);
  std::vector<PageId> gone;
  // The batch is chosen first, and its written copies are made read-only
  // in runs, so that every victim's protection change can wait and go with
  // its neighbours': until then threads read valid data and cannot write
  // (a written copy must not change while the engine takes its diff). On a
  // sweep that writes (STREAM's a[]) this saves an mprotect per written copy.
  std::vector<PageId> batch, downgraded;
  while (batch.size() < cache_->resident() - target) {
    PageId victim;
    if (!cache_->propose(&victim) || std::find(batch.begin(), batch.end(), victim) != batch.end()) break;
    batch.push_back(victim);
    if (engine_->local_access(victim) == Access::Write) downgraded.push_back(victim);
  }
  protect_in_runs(&downgraded, Access::Read);
  defer_clean_eviction_ = true;
  for (PageId victim : batch) {
    if (engine_->evict(victim) != ProtocolEngine::Eviction::Busy) {
      gone.push_back(victim);
    } else if (std::binary_search(downgraded.begin(), downgraded.end(), victim) &&
               engine_->local_access(victim) == Access::Write) {
      protect_run(victim, 1, Access::Write);  // stays: writable again
    }
  }
  // Busy copies (in flight, waited on) are passed over: then one at a
  // time, at most two passes. A clean copy's protection change may still
  // wait; a written copy is protected at once, before the engine takes its diff.
  for (size_t tries = 2 * cache_->resident() + 2; cache_->resident() > target && tries > 0; --tries) {
    PageId victim;
    if (!cache_->propose(&victim)) break;
    defer_clean_eviction_ = engine_->local_access(victim) == Access::Read;
    if (engine_->evict(victim) != ProtocolEngine::Eviction::Busy) gone.push_back(victim);
  }
  defer_clean_eviction_ = false;
  engine_->end_evictions();
  // Pooled copies among them are closed by mapping the memory file back.
  if (pool_frames_held())
    deferred_none_.erase(std::remove_if(deferred_none_.begin(), deferred_none_.end(),
                                        [&](PageId p) { return frame_slots_->mapped(p); }),
                         deferred_none_.end());
  protect_in_runs(&deferred_none_, Access::None);
  deferred_none_.clear();
  // The engine took what it needed from the frames: slots go back to the
  // pool, other frames' memory to the system.
  std::sort(gone.begin(), gone.end());
  if (frame_slots_) {
    std::vector<PageId> unpooled;
    release_frames(gone, &unpooled);
    gone.swap(unpooled);
  }
  for_each_page_run(gone, [&](PageId first, PageId count) {
    if (!platform::vm_discard(range_, first * page, count * page))
      fatal("cannot discard the frames of evicted pages %llu..+%llu: %s", (unsigned long long)first,
            (unsigned long long)count, std::strerror(errno));
  });
}

}  // namespace agora
