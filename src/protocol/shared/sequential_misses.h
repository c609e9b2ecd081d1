// Adaptive prefetch: a rank's misses to one home are watched, and while each
// falls just past the pages an earlier one fetched (a sequential sweep, as
// owner-computes codes make over a neighbour's block), the window of pages
// fetched ahead doubles, up to a cap; a miss anywhere else starts a new
// stream with nothing ahead, so random access fetches only what it touches.
// A few streams per home are followed at once: a loop over several arrays
// homed together (STREAM's a[i] = b[i] + s*c[i]) misses on each in turn, and
// each is a sweep of its own (docs/cache.md: with a bounded cache every
// iteration streams them in again).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>

#include "common/types.h"

namespace agora {

class SequentialMisses {
 public:
  explicit SequentialMisses(uint32_t max_ahead) : max_ahead_(max_ahead) {}
  uint32_t max_ahead() const { return max_ahead_; }

  // A miss on `page`, homed at `home`: how many pages after it to fetch
  // along (the caller may fetch fewer: only those still missing here).
  uint32_t on_miss(Rank home, PageId page) {
    if (max_ahead_ == 0) return 0;
    Streams &all = streams_[home];
    ++all.clock;
    // Sequential: past a stream's last miss, at most one page past what it fetched.
    Stream *st = nullptr;
    for (Stream &s : all.s)
      if (s.seen && page > s.last && page - s.last <= (PageId)s.window + 1) st = &s;
    const bool sequential = st != nullptr;
    if (!st) {  // a new stream, in place of the one missed on longest ago
      st = &all.s[0];
      for (Stream &s : all.s)
        if (!s.seen || s.used < st->used) st = &s;
      *st = Stream{};
    }
    st->window = sequential ? std::min<uint32_t>(std::max<uint32_t>(2 * st->window, 1), max_ahead_) : 0;
    st->last = page;
    st->seen = true;
    st->used = all.clock;
    return st->window;
  }

 private:
  static constexpr size_t kStreamsPerHome = 4;
  struct Stream {
    bool seen = false;
    PageId last = 0;      // the last miss
    uint32_t window = 0;  // pages fetched after it
    uint64_t used = 0;    // when it last missed
  };
  struct Streams {
    std::array<Stream, kStreamsPerHome> s{};
    uint64_t clock = 0;
  };
  uint32_t max_ahead_;
  std::unordered_map<Rank, Streams> streams_;
};

}  // namespace agora
