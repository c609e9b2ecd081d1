// Layout of the global range and the home of every page.
//
//   [0, collective_bytes)            collective allocations (agora_alloc*), bump
//                                     allocated in lock step on every rank
//   arena(r) = [collective_bytes + r*arena_bytes, +arena_bytes)
//                                     rank r's agora_malloc heap, homed on r
//
// Offsets are relative to the base address, which is the same in every rank.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/types.h"

namespace agora {

enum class Placement : int { Block = 0, Cyclic = 1, OnRank = 2 };

class AddressSpace {
 public:
  AddressSpace(uintptr_t base, uint64_t total_bytes, size_t page_size, Rank nranks);

  uintptr_t base() const { return base_; }
  uint64_t size() const { return total_; }
  size_t page_size() const { return page_; }
  PageId page_of(uintptr_t addr) const { return (addr - base_) / page_; }
  uintptr_t addr_of(PageId p) const { return base_ + p * page_; }
  bool contains(uintptr_t addr) const { return addr >= base_ && addr < base_ + total_; }

  // Home of a page that is part of the collective region in use or an arena.
  Rank home_of(PageId p) const;
  // Is the address inside memory some rank may have allocated? (Collective
  // pages beyond the bump pointer are not; arena pages are decided by their home.)
  bool maybe_allocated(uintptr_t addr) const;

  // Collective: reserve pages for `bytes` with the given placement. Returns
  // the first page, or false if the collective region is exhausted.
  bool collective_reserve(uint64_t bytes, Placement placement, Rank rank, PageId *first,
                          PageId *count);
  uint64_t collective_pages_used() const { return used_.load(std::memory_order_acquire); }
  uint64_t collective_capacity_pages() const { return collective_pages_; }

  PageId arena_first_page(Rank r) const { return collective_pages_ + (PageId)r * arena_pages_; }
  PageId arena_pages() const { return arena_pages_; }
  Rank arena_owner(uintptr_t addr) const;  // -1 if not in an arena

 private:
  uintptr_t base_;
  uint64_t total_;
  size_t page_;
  Rank nranks_;
  PageId collective_pages_;
  PageId arena_pages_;
  // Home of each collective page. Sized once (untouched memory until used)
  // so that fault handlers on other threads may read it while a collective
  // allocation appends: entries are written before used_ is published.
  std::unique_ptr<int32_t[]> homes_;
  std::atomic<PageId> used_{0};
};

}  // namespace agora
