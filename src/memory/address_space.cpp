#include "memory/address_space.h"

namespace agora {

AddressSpace::AddressSpace(uintptr_t base, uint64_t total_bytes, size_t page_size, Rank nranks)
    : base_(base), total_(total_bytes), page_(page_size), nranks_(nranks) {
  PageId pages = total_bytes / page_size;
  collective_pages_ = pages / 4;
  placed_pages_ = pages / 2 - collective_pages_;
  arena_pages_ = (pages - pages / 2) / (PageId)nranks;
  windows_.reset(pages, page_size);
}

void AddressSpace::set_memory_servers(Rank first, Rank count, PageId stripe_pages, bool on_server) {
  first_server_ = first;
  server_count_ = count;
  stripe_pages_ = stripe_pages;
  on_server_ = on_server;
}

Rank AddressSpace::home_of(PageId p) const {
  if (server_count_ > 0) {
    bool homed = on_server_ ? p < total_ / page_ || windows_.contains_page(p) : placed_home_of(p) >= 0;
    return homed ? server_of(p) : -1;
  }
  return placed_home_of(p);
}

Rank AddressSpace::placed_home_of(PageId p) const {
  if (windows_.contains_page(p)) return ProgramWindows::kHome;
  if (p < collective_pages_used()) return runs_.find(p).home(p, nranks_);
  if (in_placed_region(p)) {
    CollectiveRun run;
    return placed_.find(p, &run) ? run.home(p, nranks_) : -1;
  }
  if (p >= collective_pages_ + placed_pages_) {
    PageId r = (p - collective_pages_ - placed_pages_) / arena_pages_;
    return r < (PageId)nranks_ ? (Rank)r : -1;
  }
  return -1;
}

bool AddressSpace::maybe_allocated(uintptr_t addr) const {
  if (!contains(addr)) return false;
  if (windows_.contains(addr)) return true;
  PageId p = page_of(addr);
  if (p < collective_pages_) return p < collective_pages_used();
  if (in_placed_region(p)) {
    CollectiveRun run;
    return placed_.find(p, &run);
  }
  return arena_owner(addr) >= 0;
}

uintptr_t AddressSpace::first_unallocated(uintptr_t lo, uintptr_t hi) const {
  if (hi <= lo) return 0;
  // Both ends in the range proper (windows lie outside it): so is all between.
  const bool in_range = lo >= base_ && hi - 1 < base_ + total_;
  if (in_range && !windows_.contains(lo) && !windows_.contains(hi - 1)) {
    const PageId last = page_of(hi - 1);
    if (last < collective_pages_ && last < collective_pages_used()) return 0;
    const Rank owner = arena_owner(lo);
    if (owner >= 0 && arena_owner(hi - 1) == owner) return 0;
  }
  const uintptr_t start = lo & ~(uintptr_t)(page_ - 1);
  for (uintptr_t a = start; a < hi && a >= start; a += page_) {
    const uintptr_t at = a < lo ? lo : a;
    if (!maybe_allocated(at)) return at;
  }
  return 0;
}

Rank AddressSpace::arena_owner(uintptr_t addr) const {
  if (!contains(addr) || windows_.contains(addr)) return -1;
  PageId p = page_of(addr);
  if (p < collective_pages_ + placed_pages_) return -1;
  PageId r = (p - collective_pages_ - placed_pages_) / arena_pages_;
  return r < (PageId)nranks_ ? (Rank)r : -1;
}

bool AddressSpace::collective_reserve(uint64_t bytes, Placement placement, Rank rank, PageId *first, PageId *count) {
  // Rounded up without overflow: (bytes + page - 1) wraps for sizes near 2^64.
  PageId n = bytes / page_ + (bytes % page_ != 0);
  if (n == 0) n = 1;
  PageId used = collective_pages_used();
  if (n > collective_pages_ - used) return false;
  if (!runs_.append({used, n, placement, rank})) return false;
  *first = used;
  *count = n;
  used_.store(used + n, std::memory_order_release);
  return true;
}

CollectiveRun AddressSpace::collective_run(PageId first, PageId count) const {
  CollectiveRun run = runs_.find(first);
  run.first = first;
  run.count = count;
  return run;
}

}  // namespace agora
