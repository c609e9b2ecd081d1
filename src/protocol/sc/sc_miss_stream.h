// Adaptive detection of sequential misses, one stream per home: a miss just
// past the previous one (or past the pages fetched ahead with it) doubles the
// window of pages to take ahead, up to a cap; any other miss resets it to
// zero, so that random access asks for nothing extra. The window opens only
// at the third miss in a row: a halo of two or three pages (Jacobi, SOR)
// then takes nothing beyond it, where the pages belong to the home's own
// computation and a prefetch would only cost the home a write fault.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/types.h"

namespace agora {

class MissStreams {
 public:
  // cap: most pages ahead (0: never any).
  void reset(Rank nranks, uint32_t cap) {
    streams_.assign((size_t)nranks, Stream{});
    cap_ = cap;
  }
  // A miss on `page` homed at `home`: how many pages after it to ask for.
  uint32_t on_miss(Rank home, PageId page) {
    if (cap_ == 0 || home < 0 || (size_t)home >= streams_.size()) return 0;
    Stream &s = streams_[(size_t)home];
    const bool sequential = s.seen && page > s.last && page - s.last <= (PageId)s.window + 1;
    s.run = sequential ? s.run + 1 : 0;
    s.window = s.run >= kRunBeforeWindow ? std::min(cap_, std::max<uint32_t>(1, s.window * 2)) : 0;
    s.last = page;
    s.seen = true;
    return s.window;
  }

 private:
  static constexpr uint32_t kRunBeforeWindow = 2;
  struct Stream {
    PageId last = 0;
    uint32_t window = 0;  // pages asked for ahead of `last`
    uint32_t run = 0;     // sequential misses in a row before `last`
    bool seen = false;
  };
  std::vector<Stream> streams_;
  uint32_t cap_ = 0;
};

}  // namespace agora
