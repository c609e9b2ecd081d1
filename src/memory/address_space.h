// Layout of the global range and the home of every page.
//
//   [0, collective_bytes)            collective allocations (agora_alloc*), bump
//                                     allocated in lock step on every rank
//                                     (the first quarter of the range)
//   [collective_bytes, +placed_bytes) placed allocations (agora_malloc_placed),
//                                     sequenced by rank 0 (the second quarter)
//   arena(r) = [half + r*arena_bytes, +arena_bytes)
//                                     rank r's agora_malloc heap, homed on r
//   program windows (program mode)   the executable's .data/.bss, homed on
//                                     rank 0, page ids after the range's
//
// With memory servers every page above is homed on a server instead,
// striped (set_memory_servers); who allocates it does not change.
//
// Offsets are relative to the base address, which is the same in every rank.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>

#include "common/types.h"
#include "memory/collective_runs.h"
#include "memory/placed_runs.h"
#include "memory/program_windows.h"

namespace agora {

class AddressSpace {
 public:
  AddressSpace(uintptr_t base, uint64_t total_bytes, size_t page_size, Rank nranks);

  uintptr_t base() const { return base_; }
  uint64_t size() const { return total_; }
  size_t page_size() const { return page_; }
  PageId page_of(uintptr_t addr) const {
    PageId window_page = windows_.page_of(addr);
    return window_page != ProgramWindows::kNone ? window_page : (addr - base_) / page_;
  }
  uintptr_t addr_of(PageId p) const {
    if (windows_.contains_page(p)) return windows_.addr_of(p);
    return base_ + p * page_;
  }
  bool contains(uintptr_t addr) const { return (addr >= base_ && addr < base_ + total_) || windows_.contains(addr); }
  // Program mode: windows of the executable shared as global memory (their
  // pages follow the range's). Added at init, before any access.
  ProgramWindows &windows() { return windows_; }
  const ProgramWindows &windows() const { return windows_; }

  // Home of a page that is part of the collective region in use, a live
  // placed run or an arena; -1 otherwise.
  Rank home_of(PageId p) const;
  // Is the address inside memory some rank may have allocated? (Collective
  // pages beyond the bump pointer are not; arena pages are decided by their home.)
  bool maybe_allocated(uintptr_t addr) const;
  // The first address of [lo, hi) (at lo or a page start) that is not
  // maybe_allocated, or 0 if there is none. Without a walk when the range
  // lies in the collective region's used part or in one rank's arena, so
  // that checking a huge region costs nothing.
  uintptr_t first_unallocated(uintptr_t lo, uintptr_t hi) const;

  // Collective: reserve pages for `bytes` with the given placement. Returns
  // the first page, or false if the collective region has fewer free pages
  // (any size, up to UINT64_MAX, is checked without overflow).
  bool collective_reserve(uint64_t bytes, Placement placement, Rank rank, PageId *first, PageId *count);
  // The collective allocation [first, first+count) with its placement (for
  // for_each_run_home_pages).
  CollectiveRun collective_run(PageId first, PageId count) const;
  uint64_t collective_pages_used() const { return used_.load(std::memory_order_acquire); }
  uint64_t collective_capacity_pages() const { return collective_pages_; }

  // The placed region: runs inserted and removed as rank 0 sequences them
  // (writers hold the runtime's lock; lookups from any thread).
  PageId placed_first_page() const { return collective_pages_; }
  PageId placed_capacity_pages() const { return placed_pages_; }
  bool in_placed_region(PageId p) const { return p - collective_pages_ < placed_pages_; }
  bool placed_insert(const CollectiveRun &run) { return placed_.insert(run); }
  bool placed_remove(PageId first, CollectiveRun *removed) { return placed_.remove(first, removed); }
  bool placed_find(PageId page, CollectiveRun *run) const { return placed_.find(page, run); }

  PageId arena_first_page(Rank r) const { return collective_pages_ + placed_pages_ + (PageId)r * arena_pages_; }
  PageId arena_pages() const { return arena_pages_; }
  // Memory servers (docs/memory-servers.md): from this call on, every page
  // that has a home is homed on server first + (p / stripe_pages) % count
  // instead of where its placement says. on_server: this rank is a server,
  // which hears of no allocation, so every page of the range (and of the
  // program windows) has a home.
  void set_memory_servers(Rank first, Rank count, PageId stripe_pages, bool on_server);
  Rank servers() const { return server_count_; }
  Rank first_server() const { return first_server_; }
  Rank server_of(PageId p) const { return first_server_ + (Rank)((p / stripe_pages_) % (PageId)server_count_); }

  Rank arena_owner(uintptr_t addr) const;  // -1 if not in an arena

 private:
  Rank placed_home_of(PageId p) const;  // the home by placement, servers aside
  uintptr_t base_;
  uint64_t total_;
  size_t page_;
  Rank nranks_;
  PageId collective_pages_;
  PageId placed_pages_;
  PageId arena_pages_;
  // One record per collective allocation, not per page: a 16 TiB range
  // costs nothing until it is allocated. Fault handlers on other threads
  // read it while an allocation appends: the run is published before used_.
  CollectiveRuns runs_;
  std::atomic<PageId> used_{0};
  PlacedRuns placed_;
  Rank first_server_ = 0, server_count_ = 0;  // 0 servers: homes as placed
  PageId stripe_pages_ = 1;
  bool on_server_ = false;
  ProgramWindows windows_;
};

}  // namespace agora
