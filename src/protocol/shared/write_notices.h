// Intervals, write notices and vector time for lazy release consistency.
//
// Interval k of rank i is the stretch of rank i's execution between two
// publishing points; its write notices name the pages it wrote. A rank's
// vector time vt says which intervals it has seen: all of rank i's up to
// vt[i]. Sync operations carry the intervals the receiver lacks (Iosevich & Schuster's
// "bins"), and the receiver applies them in order.
//
// Storage is bounded by garbage collection, not a fixed ring: each rank keeps
// a lower bound of every rank's vector time (`known`, learnt from what sync
// messages carry, and from barriers); intervals at or below the minimum of
// those bounds have been applied everywhere and are dropped.
//
// Wire format of a bundle (all little-endian u32 unless noted):
//   sender, n, vt[n], has_matrix, [known[n][n]], count,
//   count x {creator, index, npages, u64 pages[npages]}
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "common/types.h"
#include "transport/message.h"

namespace agora {

using VectorTime = std::vector<uint32_t>;

// Entry i := max(entry i, value), sizing an empty vector time to nranks
// first (pages keep one only once they need it).
void vector_time_raise(VectorTime *vt, Rank nranks, Rank i, uint32_t value);
// On the wire: nranks u32 entries; an empty vector time goes as zeros.
void vector_time_append(const VectorTime &vt, Rank nranks, std::vector<std::byte> *out);
VectorTime vector_time_read(const std::byte *data, Rank nranks);

class WriteNotices {
 public:
  WriteNotices(Rank self, Rank nranks);

  const VectorTime &time() const { return known_[self_]; }
  // Records a new interval of this rank that wrote `pages`; returns its index.
  uint32_t add_own(const std::vector<PageId> &pages);

  // This rank's view, sent by an acquirer: {rank, n, vt[n]}.
  void encode_view(std::vector<std::byte> *out) const;
  // The intervals a rank whose view is `view` lacks (empty view: all that
  // some rank may lack), with this rank's vector time and knowledge.
  void encode_bundle(Payload view, std::vector<std::byte> *out);
  // Stores the intervals of a bundle that are new here, calling `apply` for
  // each in order, and learns the sender's knowledge. False if malformed or
  // if intervals are missing before the ones it carries.
  using ApplyFn = std::function<void(Rank creator, uint32_t index, const PageId *pages, size_t n)>;
  bool merge_bundle(Payload bundle, const ApplyFn &apply);

  // Every rank is known to have seen at least `floor` (e.g. after a barrier).
  void raise_all(const VectorTime &floor);
  size_t intervals_kept() const { return kept_; }

  // The garbage-collection invariant, checked by AGORA_ASSERT after every
  // collection and new interval (O(ranks)): for each creator, the intervals
  // kept are contiguous, end at this rank's vector time, and include every
  // one some rank may not have seen (above the least of the known vector
  // times); the count is their sum.
  bool consistent() const;

 private:
  friend struct WriteNoticesTestAccess;  // tests/unit: corrupts the state to show the check fires
  struct Interval {
    uint32_t index;
    std::vector<PageId> pages;
  };
  void learn(Rank who, const uint32_t *vt);
  void collect_garbage();

  Rank self_, n_;
  std::vector<VectorTime> known_;                 // known_[j]: lower bound of rank j's vt
  std::vector<std::deque<Interval>> by_creator_;  // contiguous indices per creator
  size_t kept_ = 0;
};

}  // namespace agora
