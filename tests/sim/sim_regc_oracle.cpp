#include "sim/sim_regc_oracle.h"

#include <algorithm>

namespace agora::simtest {

RegcOracle::RegcOracle(int threads, const std::vector<Rank> &node_of_thread, int locks, uint64_t words)
    : by_word_(words), release_count_(locks, 0) {
  for (int t = 0; t < threads; ++t) {
    Thread &th = threads_.emplace_back();
    th.node = node_of_thread[t];
    th.lock_seen.assign(locks, 0);
    th.in_span.resize(locks);
  }
}

uint8_t RegcOracle::older(size_t a, size_t b) const {
  if (a == b || b == kInitial) return 0;
  if (a == kInitial) return kNode;  // the initial value precedes every write
  const Write &wb = writes_[b];
  size_t ia = writes_[a].index;
  return ia < wb.older.size() ? wb.older[ia] : 0;
}

std::string RegcOracle::why_text(uint8_t why) {
  std::string out;
  const char *names[] = {"same node", "rule 1", "rule 2", "rule 3", "read before written"};
  for (int k = 0; k < 5; ++k)
    if (why & (1 << k)) out += std::string(out.empty() ? "" : ", ") + names[k];
  return out;
}

uint8_t RegcOracle::required_because(const Thread &t, const Write &w, std::string *detail) const {
  uint8_t why = 0;
  detail->clear();
  if (w.node == t.node) {
    *detail = " written on this node";
    return kNode;
  }
  if (w.barrier_epoch < t.barriers) {
    *detail += " rule 3 (written before barrier " + std::to_string(w.barrier_epoch + 1) + ", which the reader passed)";
    why |= kRule3;
  }
  for (auto [lock, count] : w.releases)
    if (count != kNever && count <= t.lock_seen[lock]) {
      *detail +=
          " rule 2 (stored in a span of lock " + std::to_string(lock) + " that ended before the reader's span of it)";
      why |= kRule2;
    }
  if (w.ordinary && w.next_span_grant != kNever && w.next_span_grant < t.last_grant) {
    *detail += " rule 1 (ordinary store; the writer's next span started at grant " + std::to_string(w.next_span_grant) +
               ", the reader's span at grant " + std::to_string(t.last_grant) + ")";
    why |= kRule1;
  }
  return why;
}

std::string RegcOracle::describe(size_t id) const {
  if (id == kInitial) return "the initial value";
  const Write &w = writes_[id];
  return "value " + std::to_string(w.value) + " (" + (w.ordinary ? "ordinary" : "consistent") + " write #" +
         std::to_string(w.index) + " of the word, by node " + std::to_string(w.node) + " thread " +
         std::to_string(w.thread) + ")";
}

void RegcOracle::write(int thread, uint64_t word, uint64_t value) {
  Thread &t = threads_[thread];
  size_t id = writes_.size();
  Write w{word, value, thread, t.node, by_word_[word].size(), {}, t.barriers, t.held.empty(), kNever, {}};
  // Everything this writer must already see of the word, and what it read
  // there, is older than the new write (transitively).
  w.older.assign(w.index, 0);
  auto take = [&](size_t r, uint8_t why) {
    // Only writes this one is ordered after pass their order on: a write
    // the writer neither had to see nor read races with it.
    if (r == kInitial || why == 0) return;
    const Write &o = writes_[r];
    w.older[o.index] |= why;
    for (size_t i = 0; i < o.older.size(); ++i)
      if (o.older[i]) w.older[i] |= o.older[i] | why;
  };
  std::string detail;
  for (size_t r : by_word_[word]) take(r, required_because(t, writes_[r], &detail));
  if (auto it = t.last_read.find(word); it != t.last_read.end()) take(it->second, kReadBefore);
  if (w.ordinary) {
    t.awaiting_span.push_back(id);
  } else {
    for (uint64_t lock : t.held) {
      w.releases.push_back({lock, kNever});
      t.in_span[lock].push_back(id);
    }
  }
  by_word_[word].push_back(id);
  by_value_[value] = id;
  writes_.push_back(std::move(w));
  // A thread reads its own write at the least from now on.
  t.last_read[word] = id;
}

std::string RegcOracle::read(int thread, uint64_t word, uint64_t value) {
  Thread &t = threads_[thread];
  reads_++;
  size_t seen = kInitial;
  if (value != 0) {
    auto it = by_value_.find(value);
    if (it == by_value_.end())
      return "saw " + std::to_string(value) + ", which no executed write stored (torn, or not written yet)";
    if (writes_[it->second].word != word)
      return "saw " + describe(it->second) + ", a write of word " + std::to_string(writes_[it->second].word);
    seen = it->second;
  }
  bool constrained[4] = {false, false, false, false};
  std::string detail;
  for (size_t r : by_word_[word]) {
    uint8_t why = required_because(t, writes_[r], &detail);
    if (!why) continue;
    constrained[1] |= (why & kRule1) != 0;
    constrained[2] |= (why & kRule2) != 0;
    constrained[3] |= (why & kRule3) != 0;
    if (uint8_t order = older(seen, r))
      return "saw " + describe(seen) + ", older (by " + why_text(order) + ") than " + describe(r) +
             ", which is required by" + detail;
  }
  for (int k = 1; k <= 3; ++k) constrained_[k] += constrained[k];
  if (auto it = t.last_read.find(word); it != t.last_read.end())
    if (uint8_t order = older(seen, it->second))
      return "saw " + describe(seen) + " after having read (or written) the newer (by " + why_text(order) + ") " +
             describe(it->second);
  t.last_read[word] = seen;
  return "";
}

void RegcOracle::granted(int thread, uint64_t lock, uint64_t stamp) {
  Thread &t = threads_[thread];
  t.last_grant = stamp;
  t.lock_seen[lock] = release_count_[lock];
  for (size_t id : t.awaiting_span) writes_[id].next_span_grant = stamp;
  t.awaiting_span.clear();
  t.held.push_back(lock);
}

void RegcOracle::released(int thread, uint64_t lock) {
  Thread &t = threads_[thread];
  uint64_t count = ++release_count_[lock];
  for (size_t id : t.in_span[lock])
    for (auto &[l, c] : writes_[id].releases)
      if (l == lock) c = count;
  t.in_span[lock].clear();
  t.held.erase(std::find(t.held.begin(), t.held.end(), lock));
}

void RegcOracle::passed_barrier(int thread) { threads_[thread].barriers++; }

}  // namespace agora::simtest
