// The bounded cache of remote pages and its frame pool (docs/cache.md), one
// rank's: which copies of remote pages it holds and when to evict them
// (copy_cache.cpp), and the pool of frames the copies live in
// (copy_cache_frames.cpp). It owns that state; it reaches the rest of the
// rank only through CacheHost (cache_host.h), which the runtime implements.
// Every call is made with the runtime's lock held; nothing here is shared
// with another subsystem except through the host.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/config.h"
#include "memory/frame_slots.h"
#include "memory/page_cache.h"
#include "runtime/cache/cache_host.h"

namespace agora {

class CopyCache {
 public:
  explicit CopyCache(CacheHost &host) : host_(host) {}
  CopyCache(const CopyCache &) = delete;
  CopyCache &operator=(const CopyCache &) = delete;

  // ---- the bound (copy_cache.cpp) ----
  // init, after the engine: the bound (AGORA_CACHE, or the kernel's mapping
  // limit, map_limit; 0 if it does not say); false with *error if
  // AGORA_CACHE is too small. reclaims_home: the engine takes home pages
  // protected apart back (sc). No pool on a memory server. Until it is
  // opened (or if it bounds nothing) every call below does nothing.
  bool open(const Config &config, uint64_t map_limit, bool reclaims_home, bool memory_server, std::string *error);
  // A protection change of pages [first, first+count).
  void note(PageId first, PageId count, Access access);
  // While trim evicts a clean copy, its protection change to none waits and
  // is applied with its neighbours', in runs: true if this one was kept to wait.
  bool defer(PageId first, PageId count, Access access);
  // Between engine calls: evict until within the bound.
  void trim();
  // Pages [first, first+count) were freed: no copies, no home pages apart.
  void forget(PageId first, PageId count);
  // Sorts `pages` and changes their protection, one call per run.
  void protect_in_runs(std::vector<PageId> *pages, Access access);
  const PageCache *copies() const { return copies_ ? &*copies_ : nullptr; }
  const PageCache *home_apart() const { return home_apart_ ? &*home_apart_ : nullptr; }

  // ---- the frame pool (copy_cache_frames.cpp) ----
  void close_frame_pool();
  bool has_pool() const { return slots_.has_value(); }
  const FrameSlots *slots() const { return slots_ ? &*slots_ : nullptr; }
  // Whether any copy holds a slot (else protection needs no pool mapping).
  bool pool_frames_held() const { return slots_ && slots_->any_held(); }
  // The page's frame in the pool, or nullptr (then its own place in the service view).
  std::byte *pooled_frame(PageId page) const;
  // EngineHost::replacing_frame: the page may take a slot.
  void replacing_frame(PageId page);
  // EngineHost::filling_frames: consecutive slots for the run; true if the
  // pool has room for it (else the runtime populates the frames).
  bool fill_from_pool(PageId first, PageId count);
  // The runtime's protect_run for a stretch of consecutive addresses while
  // slots are held: pages holding a slot not mapped yet are mapped in.
  void protect_pooled(PageId first, PageId count, Access access);
  // A landing place for a one-sided read: `count` consecutive free slots
  // (FrameSlots::kNone if none), their memory, and giving them back.
  uint32_t reserve_landing(uint32_t count);
  std::byte *slot_frames(uint32_t slot) const { return pool_.view + (size_t)slot * host_.page_size(); }
  void unreserve_landing(uint32_t slot, uint32_t count);
  // The run being installed takes the slots at `slot` (replacing_frame
  // adopts them; ends the previous landing first); end_landing gives back
  // those no copy adopted.
  void land(PageId first, uint32_t count, uint32_t slot);
  void end_landing();

 private:
  // The slots of `pages` (sorted) go back; the pages that held none are
  // appended to *unpooled.
  void release_frames(const std::vector<PageId> &pages, std::vector<PageId> *unpooled);
  void release_unused_frames();
  void reserve_for_run(PageId first, PageId count);
  void forget_frames(PageId first, PageId count);
  void open_frame_pool(const Config &config, uint64_t cache_pages, bool memory_server);

  CacheHost &host_;
  std::optional<PageCache> copies_;  // copies of remote pages held
  // Home pages protected apart from home_access() (sc: shared or owned
  // elsewhere), and those of them being reclaimed.
  std::optional<PageCache> home_apart_;
  std::set<PageId> reclaiming_;
  // While trim evicts a clean copy: its protection change to none waits in
  // deferred_none_ and is applied with its neighbours', in runs.
  bool defer_clean_eviction_ = false;
  std::vector<PageId> deferred_none_;
  // The frame pool: its memory, which page holds which slot, and the pooled
  // copies closed since the last trim.
  platform::FramePool pool_;
  std::optional<FrameSlots> slots_;
  std::vector<PageId> closed_copies_;
  // Consecutive pool slots reserved for a run of copies being installed (a
  // one-sided read landed there, or a reply's run is about to be): the
  // copies adopt them (replacing_frame), so that a run's copies take
  // consecutive slots and map in one call.
  struct Landing {
    PageId first = 0;
    uint32_t count = 0;
    uint32_t slot = FrameSlots::kNone;
  };
  Landing landing_;
};

}  // namespace agora
