// What the bounded cache of remote pages and its frame pool (CopyCache,
// copy_cache.h) need of the rank they run in: its pages' places, the
// engine's eviction hooks, and the protection and memory calls, which only
// the runtime makes (the cache calls no OS function itself, so that unit
// tests drive it with a fake host: tests/unit/copy_cache_test.cpp). The
// runtime implements it in runtime_cache.cpp; every call is made with the
// runtime's lock held.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/stats.h"
#include "common/types.h"
#include "platform/platform.h"
#include "protocol/engine.h"

namespace agora {

class CacheHost {
 public:
  virtual ~CacheHost() = default;

  // ---- the rank's pages ----
  virtual Rank rank() const = 0;
  virtual size_t page_size() const = 0;
  virtual Rank home_of(PageId page) const = 0;
  // The page's address in the application view (consecutive pages are
  // consecutive addresses except across program mode's windows).
  virtual uintptr_t view_addr(PageId page) const = 0;
  virtual Stats &stats() = 0;

  // ---- the engine's side of eviction (ProtocolEngine's hooks of the same names) ----
  virtual Access home_access() const = 0;
  virtual Access local_access(PageId page) const = 0;
  virtual bool reclaim_home(PageId page) = 0;
  virtual ProtocolEngine::Eviction evict(PageId page) = 0;
  virtual void end_evictions() = 0;
  virtual bool frame_in_use(PageId page) const = 0;

  // ---- protection and memory; each ends the job, saying why, if it fails ----
  // The application view's protection of pages [first, first+count): the
  // runtime's protect_run, which maps pooled frames in (CopyCache::protect_pooled).
  virtual void protect_run(PageId first, PageId count, Access access) = 0;
  // mprotect of `pages` pages of the application view at `start`.
  virtual void protect_view(void *start, PageId pages, Access access) = 0;
  // The frames of pages [first, first+count) go back to the system.
  virtual void discard_frames(PageId first, PageId count) = 0;
  // The memory file mapped back over `count` pages at `addr` (page `first`
  // on), tracked again for home writes where the runtime tracks them.
  virtual void map_back(void *addr, PageId first, PageId count) = 0;
  // The pool's memory (platform::frame_pool_*): false with *error if it
  // cannot be had; pool_map ends the job if the mapping fails.
  virtual bool pool_open(uint64_t slots, platform::FramePool *pool, std::string *error) = 0;
  virtual void pool_close(platform::FramePool *pool) = 0;
  virtual void pool_map(const platform::FramePool &pool, void *addr, uint32_t slot, PageId count, Access access) = 0;
};

}  // namespace agora
