// The live placed allocations (agora_malloc_placed), one record per
// allocation, for looking up the home of a page.
//
// Unlike the collective runs, placed runs are also removed (agora_free), and
// lookups come from any thread without the runtime's lock (fault handlers,
// agora_home_of). So the table is an immutable sorted snapshot replaced as a
// whole under the writer's lock (copy on write: O(live runs) per allocation
// or free, which are rare next to lookups); a reader announces itself in a
// counter while it reads one snapshot, and an old snapshot is deleted only
// once no reader is inside (else kept until a later change finds none).
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "memory/collective_runs.h"

namespace agora {

class PlacedRuns {
 public:
  PlacedRuns();
  ~PlacedRuns();
  PlacedRuns(const PlacedRuns &) = delete;
  PlacedRuns &operator=(const PlacedRuns &) = delete;

  // Writers (one at a time): false if the records cannot be allocated, or
  // (insert) the run overlaps a live one / (remove) no live run starts at first.
  bool insert(const CollectiveRun &run);
  bool remove(PageId first, CollectiveRun *removed);
  // Any thread: the live run holding page, if any.
  bool find(PageId page, CollectiveRun *out) const;

 private:
  using Snapshot = std::vector<CollectiveRun>;  // sorted by first page, disjoint
  void publish(Snapshot *next);
  std::atomic<Snapshot *> current_;
  mutable std::atomic<int> readers_{0};
  std::vector<Snapshot *> retired_;  // replaced while a reader may still hold them
};

}  // namespace agora
