#include "observe/page_profile.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace agora {

const char *alloc_kind_name(AllocKind kind) {
  switch (kind) {
    case AllocKind::Collective:
      return "agora_alloc";
    case AllocKind::Local:
      return "agora_malloc";
    case AllocKind::Placed:
      return "agora_malloc_placed";
  }
  return "?";
}

PageProfile::PageProfile(int rank, int nranks, uintptr_t base, uint64_t page_size)
    : rank_(rank), nranks_(nranks), base_(base), page_size_(page_size) {}

void PageProfile::fault(uint64_t page, int home, bool is_write, uint64_t offset) {
  std::lock_guard<std::mutex> g(mutex_);
  PageRecord &r = pages_[page];
  r.home = home;
  if (!is_write) {
    r.read_faults++;
    return;
  }
  r.write_faults++;
  note_write_epoch(r);
  r.writable = true;  // until the protocol takes write access away
  uint32_t word = (uint32_t)(offset % page_size_) & ~7u;
  auto at = std::lower_bound(r.write_offsets.begin(), r.write_offsets.end(), word);
  if (at != r.write_offsets.end() && *at == word) return;
  if (r.write_offsets.size() >= kMaxOffsets)
    r.offsets_truncated = true;
  else
    r.write_offsets.insert(at, word);
}

void PageProfile::note_write_epoch(PageRecord &r) {
  if (!r.write_epochs.empty() && r.write_epochs.back().second + 1 >= epoch_)
    r.write_epochs.back().second = std::max(r.write_epochs.back().second, epoch_);  // extends the last range
  else
    r.write_epochs.emplace_back(epoch_, epoch_);
}

void PageProfile::access_changed(uint64_t page, bool writable) {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = pages_.find(page);
  if (it == pages_.end()) {
    if (!writable) return;  // never written here: nothing to close
    it = pages_.emplace(page, PageRecord{}).first;
  }
  PageRecord &r = it->second;
  if (writable && !r.writable) note_write_epoch(r);
  if (!writable && r.writable)  // held writable from the last range's start up to this epoch
    r.write_epochs.back().second = std::max(r.write_epochs.back().second, epoch_);
  r.writable = writable;
}

void PageProfile::page_received(uint64_t page, uint64_t bytes) {
  std::lock_guard<std::mutex> g(mutex_);
  PageRecord &r = pages_[page];
  r.pages_in++;
  r.bytes_in += bytes;
}

void PageProfile::page_sent(uint64_t page, uint64_t bytes) {
  std::lock_guard<std::mutex> g(mutex_);
  PageRecord &r = pages_[page];
  r.pages_out++;
  r.bytes_out += bytes;
}

void PageProfile::next_epoch() {
  std::lock_guard<std::mutex> g(mutex_);
  // Pages still writable here may be written in the next epoch too: the
  // period is extended when it closes (access_changed) or at the end.
  epoch_++;
}

uint64_t PageProfile::epoch() const {
  std::lock_guard<std::mutex> g(mutex_);
  return epoch_;
}

void PageProfile::allocation(AllocKind kind, uintptr_t addr, uint64_t bytes, int placement, int on_rank) {
  std::lock_guard<std::mutex> g(mutex_);
  uint64_t number = ++allocations_of_kind_[(int)kind];
  allocations_.push_back({number, kind, addr, bytes, placement, on_rank});
}

std::vector<std::pair<uint32_t, uint32_t>> PageProfile::write_epochs(uint64_t page) const {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = pages_.find(page);
  if (it == pages_.end()) return {};
  return closed_epochs(it->second);
}

// The write epochs with a period still open extended to the current epoch.
std::vector<std::pair<uint32_t, uint32_t>> PageProfile::closed_epochs(const PageRecord &r) const {
  std::vector<std::pair<uint32_t, uint32_t>> epochs = r.write_epochs;
  if (r.writable && !epochs.empty()) epochs.back().second = std::max(epochs.back().second, epoch_);
  return epochs;
}

std::vector<uint32_t> PageProfile::write_offsets(uint64_t page) const {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = pages_.find(page);
  return it == pages_.end() ? std::vector<uint32_t>{} : it->second.write_offsets;
}

namespace {
const char *placement_name(AllocKind kind, int placement) {
  if (kind == AllocKind::Local) return "local";
  switch (placement) {  // Placement (memory/collective_runs.h), the same values as AGORA_PLACE_*
    case 0:
      return "block";
    case 1:
      return "cyclic";
    case 2:
      return "rank";
  }
  return "?";
}
}  // namespace

void PageProfile::write_json(std::ostream &out) const {
  std::lock_guard<std::mutex> g(mutex_);
  char addr[32];
  std::snprintf(addr, sizeof addr, "0x%" PRIxPTR, base_);
  out << "{\"agora_profile_version\":1,\"rank\":" << rank_ << ",\"nranks\":" << nranks_
      << ",\"page_size\":" << page_size_ << ",\"base\":\"" << addr << "\",\"epochs\":" << epoch_ + 1
      << ",\n\"allocations\":[";
  for (size_t i = 0; i < allocations_.size(); ++i) {
    const Allocation &a = allocations_[i];
    std::snprintf(addr, sizeof addr, "0x%" PRIxPTR, a.addr);
    out << (i ? ",\n" : "\n") << "{\"kind\":\"" << alloc_kind_name(a.kind) << "\",\"number\":" << a.number
        << ",\"rank\":" << rank_ << ",\"addr\":\"" << addr << "\",\"bytes\":" << a.bytes << ",\"placement\":\""
        << placement_name(a.kind, a.placement) << "\"";
    if (a.kind != AllocKind::Local && a.placement == 2) out << ",\"on_rank\":" << a.on_rank;
    out << "}";
  }
  out << "],\n\"pages\":[";
  bool first = true;
  for (const auto &[page, r] : pages_) {
    std::snprintf(addr, sizeof addr, "0x%" PRIxPTR, (uintptr_t)(base_ + page * page_size_));
    out << (first ? "\n" : ",\n") << "{\"page\":" << page << ",\"addr\":\"" << addr << "\",\"home\":" << r.home
        << ",\"read_faults\":" << r.read_faults << ",\"write_faults\":" << r.write_faults
        << ",\"pages_in\":" << r.pages_in << ",\"bytes_in\":" << r.bytes_in << ",\"pages_out\":" << r.pages_out
        << ",\"bytes_out\":" << r.bytes_out << ",\"write_epochs\":[";
    std::vector<std::pair<uint32_t, uint32_t>> epochs = closed_epochs(r);
    for (size_t i = 0; i < epochs.size(); ++i)
      out << (i ? "," : "") << "[" << epochs[i].first << "," << epochs[i].second << "]";
    out << "],\"write_offsets\":[";
    for (size_t i = 0; i < r.write_offsets.size(); ++i) out << (i ? "," : "") << r.write_offsets[i];
    out << "],\"write_offsets_truncated\":" << (r.offsets_truncated ? "true" : "false") << "}";
    first = false;
  }
  out << "\n]}\n";
}

}  // namespace agora
