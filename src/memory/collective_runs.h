// The collective allocations, one record per agora_alloc (a run of pages and
// its placement), so that the home of a page costs memory in proportion to
// the allocations made, not to the size of the global range.
//
// Appends happen one at a time (the runtime's lock); lookups happen from any
// thread at any time without a lock (fault handlers, agora_home_of): records
// live in segments that never move, and a record is written before the count
// that makes it visible is published (release / acquire).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "common/types.h"

namespace agora {

enum class Placement : int { Block = 0, Cyclic = 1, OnRank = 2 };

struct CollectiveRun {
  PageId first = 0, count = 0;
  Placement placement = Placement::Block;
  Rank rank = 0;  // OnRank placement
  Rank home(PageId page, Rank nranks) const;
};

// Calls fn(first, count) for each stretch of consecutive pages of run that
// `who` homes (block: one stretch; cyclic: one per page; on a rank: all).
void for_each_run_home_pages(const CollectiveRun &run, Rank who, Rank nranks,
                             const std::function<void(PageId, PageId)> &fn);

class CollectiveRuns {
 public:
  // Appends a run starting where the previous one ended; false if the
  // records cannot be allocated.
  bool append(const CollectiveRun &run);
  uint64_t size() const { return published_.load(std::memory_order_acquire); }
  // The run holding `page`, which must lie below the end of the last run
  // published (callers check against the pages in use first). O(log runs).
  const CollectiveRun &find(PageId page) const;

 private:
  // Segment s holds kFirstSegment << s records: 2^48 records in all, each
  // segment allocated when first needed.
  static constexpr uint64_t kFirstSegment = 64;
  static constexpr int kSegments = 42;
  const CollectiveRun &at(uint64_t index) const;
  std::unique_ptr<CollectiveRun[]> segments_[kSegments];
  std::atomic<uint64_t> published_{0};
};

}  // namespace agora
