// Adaptive detection of sequential misses, one stream per home: a miss just
// past the previous one (or past the pages fetched ahead with it) doubles the
// window of pages to take ahead, up to a cap; any other miss resets it to
// zero, so that random access asks for nothing extra.
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
    s.window = sequential ? std::min(cap_, std::max<uint32_t>(1, s.window * 2)) : 0;
    s.last = page;
    s.seen = true;
    return s.window;
  }

 private:
  struct Stream {
    PageId last = 0;
    uint32_t window = 0;  // pages asked for ahead of `last`
    bool seen = false;
  };
  std::vector<Stream> streams_;
  uint32_t cap_ = 0;
};

}  // namespace agora
