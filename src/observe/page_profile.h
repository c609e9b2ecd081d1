// One rank's per-page profile (AGORA_PROFILE=1; docs/observability.md):
// for every page this rank touched, its read and write faults and the whole
// pages it received and sent, and the barrier epochs in which it wrote the
// page (took a write fault on it); plus every allocation made here, so that
// a page can be named as "allocation #k + offset". Written at finalize as
// JSON, one file per rank; tools/agora-report merges the ranks' files and
// counts, per page, the epochs in which two or more ranks wrote it (false
// sharing, or true write sharing).
//
// No MPI and no OS calls; one mutex, taken only when profiling is on.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace agora {

enum class AllocKind : uint8_t { Collective, Local, Placed };
const char *alloc_kind_name(AllocKind kind);  // the API call: "agora_alloc", ...

class PageProfile {
 public:
  PageProfile(int rank, int nranks, uintptr_t base, uint64_t page_size);

  // offset: of the faulting address within the page. The report tells
  // false from true sharing by whether ranks' write faults hit the same words.
  void fault(uint64_t page, int home, bool is_write, uint64_t offset);
  // Whole pages moved by a message (received here, or sent from here).
  void page_received(uint64_t page, uint64_t bytes);
  void page_sent(uint64_t page, uint64_t bytes);
  // The protocol gave (writable) or took away write access to the page here.
  // A rank may write a page in every epoch it holds write access, not only
  // in those where it took a write fault (under sc a page kept writable
  // across a barrier takes no fault in the next epoch): the epochs of a
  // write-access period all count as epochs this rank wrote the page.
  void access_changed(uint64_t page, bool writable);
  // A barrier ended: later writes belong to the next epoch. Every rank
  // passes the same barriers, so epoch numbers agree across ranks.
  void next_epoch();
  // placement, on_rank: as given to the call (ignored for agora_malloc).
  void allocation(AllocKind kind, uintptr_t addr, uint64_t bytes, int placement, int on_rank);

  uint64_t epoch() const;
  // A page's write epochs as closed ranges [first, last] of consecutive epochs.
  std::vector<std::pair<uint32_t, uint32_t>> write_epochs(uint64_t page) const;
  std::vector<uint32_t> write_offsets(uint64_t page) const;
  void write_json(std::ostream &out) const;

 private:
  struct PageRecord {
    int home = -1;
    uint64_t read_faults = 0, write_faults = 0;
    uint64_t bytes_in = 0, pages_in = 0, bytes_out = 0, pages_out = 0;
    // Run-length: a page written in every epoch costs one range.
    std::vector<std::pair<uint32_t, uint32_t>> write_epochs;
    bool writable = false;  // in a write-access period (opened at write_epochs.back().first or later)
    // Distinct 8-byte words where this rank's write faults hit, sorted; at
    // most kMaxOffsets (then offsets_truncated).
    std::vector<uint32_t> write_offsets;
    bool offsets_truncated = false;
  };
  static constexpr size_t kMaxOffsets = 64;
  void note_write_epoch(PageRecord &r);                                                 // mutex_ held
  std::vector<std::pair<uint32_t, uint32_t>> closed_epochs(const PageRecord &r) const;  // mutex_ held
  struct Allocation {
    uint64_t number;  // per kind, in call order on this rank (collective: the same on every rank)
    AllocKind kind;
    uintptr_t addr;
    uint64_t bytes;
    int placement, on_rank;
  };
  int rank_, nranks_;
  uintptr_t base_;
  uint64_t page_size_;
  mutable std::mutex mutex_;
  uint32_t epoch_ = 0;
  std::map<uint64_t, PageRecord> pages_;  // ordered: the file lists pages in address order
  std::vector<Allocation> allocations_;
  uint64_t allocations_of_kind_[3] = {0, 0, 0};
};

}  // namespace agora
