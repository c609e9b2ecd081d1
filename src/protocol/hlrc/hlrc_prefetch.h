// Adaptive prefetch: a rank's read misses to one home are watched, and
// while each falls just past the pages the previous one fetched (a
// sequential sweep, as owner-computes codes make over a neighbour's block),
// the window of pages fetched ahead doubles, up to a cap; a miss anywhere
// else resets it to nothing, so random access fetches only what it touches.
#pragma once
#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "common/types.h"

namespace agora {

class SequentialMisses {
 public:
  explicit SequentialMisses(uint32_t max_ahead) : max_ahead_(max_ahead) {}
  uint32_t max_ahead() const { return max_ahead_; }

  // A read miss on `page`, homed at `home`: how many pages after it to fetch
  // along (the caller may fetch fewer: only those still missing here).
  uint32_t on_miss(Rank home, PageId page) {
    if (max_ahead_ == 0) return 0;
    Stream &st = streams_[home];
    // Sequential: past the last miss, and at most one page past what it fetched.
    const bool sequential = st.seen && page > st.last && page - st.last <= (PageId)st.window + 1;
    st.window = sequential ? std::min<uint32_t>(std::max<uint32_t>(2 * st.window, 1), max_ahead_) : 0;
    st.last = page;
    st.seen = true;
    return st.window;
  }

 private:
  struct Stream {
    bool seen = false;
    PageId last = 0;      // the last miss
    uint32_t window = 0;  // pages fetched after it
  };
  uint32_t max_ahead_;
  std::unordered_map<Rank, Stream> streams_;
};

}  // namespace agora
