// Runs of whole pages in a region: first fit over a free list with
// coalescing, live runs tracked out of band so that a free of anything but
// the start of a live run is detected. Rank 0 keeps the one for the placed
// region (it sequences every agora_malloc_placed and its free).
#pragma once
#include <cstdint>
#include <map>

#include "common/types.h"

namespace agora {

class PageRunAllocator {
 public:
  PageRunAllocator(PageId first, PageId pages);

  // First page of `count` free pages (count >= 1), or UINT64_MAX if no free
  // run is that long.
  PageId allocate(PageId count);
  // Takes the live run starting at `first` out of use (its pages are not
  // free yet: release them once every rank has let them go). 0 if there is
  // none: *inside says whether first lies within a live run.
  PageId retire(PageId first, bool *inside);
  void release(PageId first, PageId count);
  PageId pages_free() const { return free_pages_; }
  PageId capacity() const { return pages_; }

 private:
  PageId first_, pages_, free_pages_;
  std::map<PageId, PageId> free_;  // first -> count
  std::map<PageId, PageId> live_;  // first -> count
};

}  // namespace agora
