// What regional consistency moves between ranks: one entry per page per
// closed interval. An entry names the page and the home's version of it
// once the interval's writes were applied there (versions count the diffs a
// home applied to the page, so they order every write to it). An entry is
// an *update* when it carries the written bytes (an encoded page diff), or a
// *notice* when it carries none (the receiver invalidates an older copy).
//
// Entries travel in three ways: broadcast to every rank before a span starts
// (rule 1), in a lock's log to its next holder (rule 2), and at barriers
// (rule 3). A copy applies them in version order; an update that does not
// directly follow the copy's version is treated as a notice, so a copy is
// always some version the home had.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "common/types.h"
#include "transport/message.h"

namespace agora {

struct RegcEntry {
  PageId page = 0;
  uint64_t version = 0;           // 0 until the home acknowledged the diff
  uint32_t phase = 0;             // barriers its creator had completed
  std::vector<std::byte> update;  // encoded diff; empty: a notice
  bool broadcast = false;         // sent to every rank (before any later barrier message)
};
using RegcEntryRef = std::shared_ptr<RegcEntry>;

// A set of entries, at most the newest kMaxPerPage numbered ones per page (a
// lock's log must stay bounded in programs that never reach a barrier).
class RegcLog {
 public:
  static constexpr size_t kMaxPerPage = 16;

  void add(const RegcEntryRef &e);
  void add_all(const RegcLog &other);
  // Drops entries made before the creator completed `phases` barriers.
  void drop_before_phase(uint32_t phases);
  bool empty() const { return by_page_.empty(); }
  size_t size() const;
  void clear() { by_page_.clear(); }
  // In page order, each page's entries in version order.
  std::vector<RegcEntryRef> entries();

  // Wire: u32 count, then {u64 page, u64 version, u32 phase, u32 bytes, update}*.
  void encode(std::vector<std::byte> *out);
  static bool decode(Payload p, std::vector<RegcEntryRef> *out);

 private:
  // Sorts a page's numbered entries, drops duplicates, collapses beyond kMaxPerPage.
  static void normalize(std::vector<RegcEntryRef> &list);
  void normalize_all();
  std::map<PageId, std::vector<RegcEntryRef>> by_page_;
};

}  // namespace agora
