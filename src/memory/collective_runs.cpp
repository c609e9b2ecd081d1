#include "memory/collective_runs.h"

#include <new>

namespace agora {

Rank CollectiveRun::home(PageId page, Rank nranks) const {
  PageId i = page - first;
  switch (placement) {
    // Rank r homes pages [ceil(r*count/n), ceil((r+1)*count/n)); 128 bits
    // because i * nranks can pass 2^64 for a range of 2^35 pages.
    case Placement::Block:
      return (Rank)(((unsigned __int128)i * (unsigned)nranks) / count);
    case Placement::Cyclic:
      return (Rank)(i % (PageId)nranks);
    default:
      return rank;
  }
}

void for_each_run_home_pages(const CollectiveRun &run, Rank who, Rank nranks,
                             const std::function<void(PageId, PageId)> &fn) {
  PageId first = run.first, count = run.count;
  auto ceil_div = [](unsigned __int128 a, PageId b) { return (PageId)((a + b - 1) / b); };
  switch (run.placement) {
    case Placement::Block: {
      PageId lo = ceil_div((unsigned __int128)who * count, (PageId)nranks);
      PageId hi = ceil_div((unsigned __int128)(who + 1) * count, (PageId)nranks);
      if (hi > lo) fn(first + lo, hi - lo);
      break;
    }
    case Placement::Cyclic:
      if (nranks == 1)
        fn(first, count);
      else
        for (PageId i = (PageId)who; i < count; i += (PageId)nranks) fn(first + i, 1);
      break;
    default:
      if (run.rank == who) fn(first, count);
      break;
  }
}

namespace {
// Segment and slot of a record index: segment s starts at 64 * (2^s - 1).
inline int segment_of(uint64_t index, uint64_t first_segment) {
  return 63 - __builtin_clzll(index / first_segment + 1);
}
}  // namespace

const CollectiveRun &CollectiveRuns::at(uint64_t index) const {
  int s = segment_of(index, kFirstSegment);
  return segments_[s][index - kFirstSegment * ((1ull << s) - 1)];
}

bool CollectiveRuns::append(const CollectiveRun &run) {
  uint64_t n = published_.load(std::memory_order_relaxed);
  int s = segment_of(n, kFirstSegment);
  if (s >= kSegments) return false;
  if (!segments_[s]) {
    segments_[s].reset(new (std::nothrow) CollectiveRun[kFirstSegment << s]);
    if (!segments_[s]) return false;
  }
  segments_[s][n - kFirstSegment * ((1ull << s) - 1)] = run;
  published_.store(n + 1, std::memory_order_release);
  return true;
}

const CollectiveRun &CollectiveRuns::find(PageId page) const {
  // The last run starting at or before page; runs are contiguous and sorted.
  uint64_t lo = 0, hi = size();  // answer in [lo, hi)
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (at(mid).first <= page)
      lo = mid;
    else
      hi = mid;
  }
  return at(lo);
}

}  // namespace agora
