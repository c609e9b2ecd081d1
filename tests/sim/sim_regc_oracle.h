// The shadow model of Regional Consistency (Samhita/RegC, section III) that the
// RegC simulator tester checks every read against. It is told, in the
// simulator's execution order, every write, lock grant (a span's start),
// lock release (a span's end) and barrier passage, and decides whether a
// read may return the write it returned.
//
// A write is *required* at thread t (of node j) when RegC obliges t to see
// it (or a newer write):
//   node   a write by any thread of node j (they share its memory);
//   rule 3 a write made before its writer arrived at a barrier t has passed;
//   rule 2 a write made inside a span of lock L (a consistent store; in
//          nested spans it belongs to every lock held), once that span has
//          ended, from t's next span of L on (counted by L's releases);
//   rule 1 an ordinary write (its writer held no lock) made before its
//          writer's next span start S, from t's first span start (any lock)
//          granted after S was.
// "Newer" is the order the model itself forces between writes of one word:
// w1 is older than w2 if w1 was required at w2's writer when it wrote w2, or
// that writer had read w1 there (and transitively). Writes the model leaves
// unordered (a data race) may be seen in either order, as coherence at a
// home may merge them in arrival order. A read must return the initial value
// or an executed write of that word, not older than any required write nor
// than what the thread read there before.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/types.h"

namespace agora::simtest {

class RegcOracle {
 public:
  RegcOracle(int threads, const std::vector<Rank> &node_of_thread, int locks, uint64_t words);

  void write(int thread, uint64_t word, uint64_t value);
  // Empty if RegC allows thread to read `value` from `word` now, else why not.
  std::string read(int thread, uint64_t word, uint64_t value);
  // `stamp`: when the lock was granted, increasing in execution order; grants
  // made by one simulator action share a stamp (neither is after the other).
  void granted(int thread, uint64_t lock, uint64_t stamp);
  void released(int thread, uint64_t lock);
  void passed_barrier(int thread);

  // Reads checked, and reads at which some write of another node was
  // required by rule 1, 2 or 3 (index 1..3): how much each rule was tested.
  uint64_t reads() const { return reads_; }
  uint64_t reads_constrained_by(int rule) const { return constrained_[rule]; }

 private:
  static constexpr uint64_t kNever = UINT64_MAX;
  static constexpr size_t kInitial = SIZE_MAX;  // "write" id of the initial value
  struct Write {
    uint64_t word, value;
    int thread;
    Rank node;
    size_t index;  // among the writes of its word, in execution order
    // older[i]: why write i of this word is older than this one (Why bits
    // along the chain that orders them; 0: not older).
    std::vector<uint8_t> older;
    uint64_t barrier_epoch;  // barriers its writer had passed
    bool ordinary;
    uint64_t next_span_grant = kNever;                    // rule 1
    std::vector<std::pair<uint64_t, uint64_t>> releases;  // rule 2: (lock, release count or kNever)
  };
  struct Thread {
    Rank node;
    uint64_t barriers = 0;
    uint64_t last_grant = 0;                         // stamp of its latest span start
    std::vector<uint64_t> lock_seen;                 // per lock: its release count at the latest grant here
    std::vector<uint64_t> held;                      // locks, outermost first
    std::vector<size_t> awaiting_span;               // ordinary writes before its next span start
    std::vector<std::vector<size_t>> in_span;        // per lock: writes of the current span
    std::unordered_map<uint64_t, size_t> last_read;  // word -> write id (or kInitial)
  };

  // Why a write is required at a thread, or ordered before another.
  enum Why : uint8_t { kNode = 1, kRule1 = 2, kRule2 = 4, kRule3 = 8, kReadBefore = 16 };
  static std::string why_text(uint8_t why);
  // Why write w is required at thread t (0 if it is not); *detail says how.
  uint8_t required_because(const Thread &t, const Write &w, std::string *detail) const;
  std::string describe(size_t id) const;
  uint8_t older(size_t a, size_t b) const;  // why write a is older than write b (same word), or 0

  std::vector<Thread> threads_;
  std::vector<Write> writes_;
  std::vector<std::vector<size_t>> by_word_;
  std::unordered_map<uint64_t, size_t> by_value_;
  std::vector<uint64_t> release_count_;
  uint64_t reads_ = 0;
  uint64_t constrained_[4] = {0, 0, 0, 0};
};

}  // namespace agora::simtest
