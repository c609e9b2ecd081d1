// Program mode's shared windows: ranges of the executable's own address
// space (its .data and .bss, collected by src/program/agora-program.ld) that
// are global memory homed on rank 0. Their pages take the ids after the
// global range's, so every `base + offset` computation of the range stays
// valid, and the memory object holds them after the range's pages.
#pragma once
#include <cstdint>

#include "common/types.h"

namespace agora {

class ProgramWindows {
 public:
  static constexpr int kMax = 2;  // data, bss
  static constexpr Rank kHome = 0;

  // first_page: the id of the first window page (the range's page count).
  void reset(PageId first_page, uint64_t page_size) {
    first_ = first_page;
    page_ = page_size;
    count_ = 0;
    pages_ = 0;
  }
  // addr and bytes page aligned; false if full.
  bool add(uintptr_t addr, uint64_t bytes) {
    if (count_ == kMax || bytes == 0) return count_ < kMax;
    w_[count_++] = {addr, bytes / page_, first_ + pages_};
    pages_ += bytes / page_;
    return true;
  }
  int count() const { return count_; }
  uintptr_t addr(int i) const { return w_[i].addr; }
  uint64_t bytes(int i) const { return w_[i].pages * page_; }
  PageId first_page(int i) const { return w_[i].first; }
  PageId pages() const { return pages_; }

  static constexpr PageId kNone = ~PageId(0);
  bool contains(uintptr_t a) const { return page_of(a) != kNone; }
  bool contains_page(PageId p) const { return count_ && p >= first_ && p < first_ + pages_; }
  // kNone if a is in no window.
  PageId page_of(uintptr_t a) const {
    for (int i = 0; i < count_; ++i)
      if (a >= w_[i].addr && a - w_[i].addr < w_[i].pages * page_) return w_[i].first + (a - w_[i].addr) / page_;
    return kNone;
  }
  uintptr_t addr_of(PageId p) const {
    for (int i = 0; i < count_; ++i)
      if (p >= w_[i].first && p < w_[i].first + w_[i].pages) return w_[i].addr + (p - w_[i].first) * page_;
    return 0;
  }

 private:
  struct Window {
    uintptr_t addr;
    PageId pages, first;
  };
  Window w_[kMax]{};
  int count_ = 0;
  PageId first_ = 0, pages_ = 0;
  uint64_t page_ = 4096;
};

}  // namespace agora
