#include "memory/address_space.h"

namespace agora {

AddressSpace::AddressSpace(uintptr_t base, uint64_t total_bytes, size_t page_size, Rank nranks)
    : base_(base), total_(total_bytes), page_(page_size), nranks_(nranks) {
  PageId pages = total_bytes / page_size;
  collective_pages_ = pages / 2;
  arena_pages_ = (pages - collective_pages_) / (PageId)nranks;
  homes_.reset(new int32_t[collective_pages_]);
}

Rank AddressSpace::home_of(PageId p) const {
  if (p < collective_pages_used()) return homes_[p];
  if (p >= collective_pages_) {
    PageId r = (p - collective_pages_) / arena_pages_;
    return r < (PageId)nranks_ ? (Rank)r : -1;
  }
  return -1;
}

bool AddressSpace::maybe_allocated(uintptr_t addr) const {
  if (!contains(addr)) return false;
  PageId p = page_of(addr);
  if (p < collective_pages_) return p < collective_pages_used();
  return arena_owner(addr) >= 0;
}

Rank AddressSpace::arena_owner(uintptr_t addr) const {
  if (!contains(addr)) return -1;
  PageId p = page_of(addr);
  if (p < collective_pages_) return -1;
  PageId r = (p - collective_pages_) / arena_pages_;
  return r < (PageId)nranks_ ? (Rank)r : -1;
}

bool AddressSpace::collective_reserve(uint64_t bytes, Placement placement, Rank rank,
                                      PageId *first, PageId *count) {
  PageId n = (bytes + page_ - 1) / page_;
  if (n == 0) n = 1;
  PageId used = collective_pages_used();
  if (used + n > collective_pages_) return false;
  *first = used;
  *count = n;
  for (PageId i = 0; i < n; ++i) {
    Rank home;
    switch (placement) {
      case Placement::Block: home = (Rank)((i * (PageId)nranks_) / n); break;
      case Placement::Cyclic: home = (Rank)(i % (PageId)nranks_); break;
      default: home = rank; break;
    }
    homes_[used + i] = home;
  }
  used_.store(used + n, std::memory_order_release);
  return true;
}

}  // namespace agora
