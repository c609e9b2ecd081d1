#include "protocol/shared/write_notices.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"

namespace agora {

namespace {
// Knowledge matrices grow as n^2; past this size only vector times travel.
constexpr Rank kMaxMatrixRanks = 32;

template <typename T>
void put(std::vector<std::byte> *out, T v) {
  std::byte b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  out->insert(out->end(), b, b + sizeof v);
}

struct Reader {
  const std::byte *p;
  size_t left;
  bool ok = true;
  template <typename T>
  T get() {
    T v{};
    if (left < sizeof v) {
      ok = false;
      return v;
    }
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    left -= sizeof v;
    return v;
  }
};
}  // namespace

void vector_time_raise(VectorTime *vt, Rank nranks, Rank i, uint32_t value) {
  if (vt->empty()) vt->assign(nranks, 0);
  (*vt)[i] = std::max((*vt)[i], value);
}

void vector_time_append(const VectorTime &vt, Rank nranks, std::vector<std::byte> *out) {
  for (Rank i = 0; i < nranks; ++i) put<uint32_t>(out, vt.empty() ? 0 : vt[i]);
}

VectorTime vector_time_read(const std::byte *data, Rank nranks) {
  VectorTime vt(nranks);
  std::memcpy(vt.data(), data, 4 * (size_t)nranks);
  return vt;
}

WriteNotices::WriteNotices(Rank self, Rank nranks)
    : self_(self), n_(nranks), known_(nranks, VectorTime(nranks, 0)), by_creator_(nranks) {}

uint32_t WriteNotices::add_own(const std::vector<PageId> &pages) {
  uint32_t index = ++known_[self_][self_];
  by_creator_[self_].push_back({index, pages});
  ++kept_;
  AGORA_ASSERT(consistent());
  return index;
}

void WriteNotices::encode_view(std::vector<std::byte> *out) const {
  put<uint32_t>(out, (uint32_t)self_);
  put<uint32_t>(out, (uint32_t)n_);
  vector_time_append(time(), n_, out);
}

void WriteNotices::encode_bundle(Payload view, std::vector<std::byte> *out) {
  // What the receiver has surely seen: its view, and what everyone has seen.
  VectorTime floor(n_, UINT32_MAX);
  for (const VectorTime &k : known_)
    for (Rank i = 0; i < n_; ++i) floor[i] = std::min(floor[i], k[i]);
  if (view.size) {
    Reader r{view.data, view.size};
    Rank who = (Rank)r.get<uint32_t>();
    uint32_t n = r.get<uint32_t>();
    if (r.ok && n == (uint32_t)n_ && r.left == 4 * (size_t)n_ && who >= 0 && who < n_) {
      VectorTime theirs(n_);
      for (auto &v : theirs) v = r.get<uint32_t>();
      learn(who, theirs.data());
      for (Rank i = 0; i < n_; ++i) floor[i] = std::max(floor[i], known_[who][i]);
    }
  }
  put<uint32_t>(out, (uint32_t)self_);
  put<uint32_t>(out, (uint32_t)n_);
  vector_time_append(time(), n_, out);
  bool matrix = n_ <= kMaxMatrixRanks;
  put<uint32_t>(out, matrix);
  if (matrix)
    for (const VectorTime &k : known_)
      for (uint32_t v : k) put(out, v);
  size_t count_at = out->size();
  put<uint32_t>(out, 0);
  uint32_t count = 0;
  for (Rank c = 0; c < n_; ++c)
    for (const Interval &iv : by_creator_[c]) {
      if (iv.index <= floor[c]) continue;
      put<uint32_t>(out, (uint32_t)c);
      put<uint32_t>(out, iv.index);
      put<uint32_t>(out, (uint32_t)iv.pages.size());
      for (PageId p : iv.pages) put<uint64_t>(out, p);
      ++count;
    }
  std::memcpy(out->data() + count_at, &count, 4);
}

bool WriteNotices::merge_bundle(Payload bundle, const ApplyFn &apply) {
  Reader r{bundle.data, bundle.size};
  Rank sender = (Rank)r.get<uint32_t>();
  uint32_t n = r.get<uint32_t>();
  if (!r.ok || n != (uint32_t)n_ || sender < 0 || sender >= n_) return false;
  VectorTime sender_vt(n_);
  for (auto &v : sender_vt) v = r.get<uint32_t>();
  std::vector<VectorTime> matrix;
  if (r.get<uint32_t>()) {
    matrix.assign(n_, VectorTime(n_));
    for (auto &row : matrix)
      for (auto &v : row) v = r.get<uint32_t>();
  }
  uint32_t count = r.get<uint32_t>();
  if (!r.ok) return false;
  VectorTime &vt = known_[self_];
  std::vector<PageId> pages;
  for (uint32_t k = 0; k < count; ++k) {
    Rank creator = (Rank)r.get<uint32_t>();
    uint32_t index = r.get<uint32_t>();
    uint32_t npages = r.get<uint32_t>();
    if (!r.ok || creator < 0 || creator >= n_ || r.left < 8ull * npages) return false;
    pages.resize(npages);
    for (auto &p : pages) p = r.get<uint64_t>();
    if (index <= vt[creator]) continue;          // seen already
    if (index != vt[creator] + 1) return false;  // a gap: intervals were lost
    vt[creator] = index;
    by_creator_[creator].push_back({index, pages});
    ++kept_;
    apply(creator, index, pages.data(), pages.size());
  }
  // The sender has seen all it claims, so this rank now has too.
  for (Rank i = 0; i < n_; ++i)
    if (vt[i] < sender_vt[i]) return false;
  learn(sender, sender_vt.data());
  for (Rank j = 0; j < (Rank)matrix.size(); ++j) learn(j, matrix[j].data());
  collect_garbage();
  return true;
}

void WriteNotices::raise_all(const VectorTime &floor) {
  for (Rank j = 0; j < n_; ++j) learn(j, floor.data());
  collect_garbage();
}

void WriteNotices::learn(Rank who, const uint32_t *vt) {
  if (who == self_) return;  // this rank's own row is its vector time
  for (Rank i = 0; i < n_; ++i) known_[who][i] = std::max(known_[who][i], vt[i]);
}

void WriteNotices::collect_garbage() {
  for (Rank c = 0; c < n_; ++c) {
    uint32_t floor = UINT32_MAX;
    for (const VectorTime &k : known_) floor = std::min(floor, k[c]);
    auto &q = by_creator_[c];
    while (!q.empty() && q.front().index <= floor) {
      q.pop_front();
      --kept_;
    }
  }
  AGORA_ASSERT(consistent());
}

bool WriteNotices::consistent() const {
  size_t total = 0;
  for (Rank c = 0; c < n_; ++c) {
    uint32_t floor = UINT32_MAX;
    for (const VectorTime &k : known_) floor = std::min(floor, k[c]);
    const uint32_t seen = known_[self_][c];
    if (floor > seen) return false;  // this rank's own row is one of the bounds
    const auto &q = by_creator_[c];
    total += q.size();
    // Every interval in (floor, seen] may be missing somewhere: all kept.
    if (q.empty()) {
      if (seen > floor) return false;
      continue;
    }
    if (q.back().index != seen || q.back().index - q.front().index + 1 != q.size()) return false;
    if (q.front().index > floor + 1) return false;
  }
  return total == kept_;
}

}  // namespace agora
