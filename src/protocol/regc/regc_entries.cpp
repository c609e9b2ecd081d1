#include "protocol/regc/regc_entries.h"

#include <algorithm>
#include <cstring>

namespace agora {

void RegcLog::add(const RegcEntryRef &e) {
  std::vector<RegcEntryRef> &list = by_page_[e->page];
  list.push_back(e);
  if (list.size() > 2 * kMaxPerPage) normalize(list);
}

void RegcLog::normalize(std::vector<RegcEntryRef> &list) {
  // Entries join a log when their interval closes, before the home has
  // numbered them (version 0): those stay as they are, after the others.
  auto pending = std::stable_partition(list.begin(), list.end(), [](const RegcEntryRef &e) { return e->version != 0; });
  std::vector<RegcEntryRef> later(pending, list.end());
  list.erase(pending, list.end());
  std::stable_sort(list.begin(), list.end(),
                   [](const RegcEntryRef &a, const RegcEntryRef &b) { return a->version < b->version; });
  std::vector<RegcEntryRef> kept;
  for (const auto &e : list) {
    if (!kept.empty() && kept.back()->version == e->version) {
      if (kept.back()->update.empty() && !e->update.empty()) kept.back() = e;  // the same writes, with their bytes
      continue;
    }
    kept.push_back(e);
  }
  // The newest kMaxPerPage suffice: a copy older than them misses one and
  // is invalidated (an update applies only to its predecessor), and the
  // newest still says which version every copy must reach.
  if (kept.size() > kMaxPerPage) kept.erase(kept.begin(), kept.end() - kMaxPerPage);
  std::sort(later.begin(), later.end());
  later.erase(std::unique(later.begin(), later.end()), later.end());
  kept.insert(kept.end(), later.begin(), later.end());
  list.swap(kept);
}

void RegcLog::normalize_all() {
  for (auto &[page, list] : by_page_) normalize(list);
}

void RegcLog::add_all(const RegcLog &other) {
  for (const auto &[page, list] : other.by_page_)
    for (const auto &e : list) add(e);
}

void RegcLog::drop_before_phase(uint32_t phases) {
  for (auto it = by_page_.begin(); it != by_page_.end();) {
    auto &list = it->second;
    list.erase(std::remove_if(list.begin(), list.end(), [&](const RegcEntryRef &e) { return e->phase < phases; }),
               list.end());
    it = list.empty() ? by_page_.erase(it) : std::next(it);
  }
}

size_t RegcLog::size() const {
  size_t n = 0;
  for (const auto &[page, list] : by_page_) n += list.size();
  return n;
}

std::vector<RegcEntryRef> RegcLog::entries() {
  normalize_all();
  std::vector<RegcEntryRef> out;
  for (const auto &[page, list] : by_page_) out.insert(out.end(), list.begin(), list.end());
  return out;
}

namespace {
template <typename T>
void put(std::vector<std::byte> *out, T v) {
  size_t at = out->size();
  out->resize(at + sizeof v);
  std::memcpy(out->data() + at, &v, sizeof v);
}
template <typename T>
bool get(Payload p, size_t *at, T *v) {
  if (*at + sizeof *v > p.size) return false;
  std::memcpy(v, p.data + *at, sizeof *v);
  *at += sizeof *v;
  return true;
}
}  // namespace

void RegcLog::encode(std::vector<std::byte> *out) {
  normalize_all();
  put<uint32_t>(out, (uint32_t)size());
  for (const auto &[page, list] : by_page_)
    for (const auto &e : list) {
      put<uint64_t>(out, e->page);
      put<uint64_t>(out, e->version);
      put<uint32_t>(out, e->phase);
      put<uint32_t>(out, (uint32_t)e->update.size());
      out->insert(out->end(), e->update.begin(), e->update.end());
    }
}

bool RegcLog::decode(Payload p, std::vector<RegcEntryRef> *out) {
  size_t at = 0;
  uint32_t count;
  if (!get(p, &at, &count)) return false;
  for (uint32_t i = 0; i < count; ++i) {
    auto e = std::make_shared<RegcEntry>();
    uint32_t bytes;
    if (!get(p, &at, &e->page) || !get(p, &at, &e->version) || !get(p, &at, &e->phase) || !get(p, &at, &bytes) ||
        bytes > p.size - at)
      return false;
    e->update.assign(p.data + at, p.data + at + bytes);
    at += bytes;
    out->push_back(std::move(e));
  }
  return at == p.size;
}

}  // namespace agora
