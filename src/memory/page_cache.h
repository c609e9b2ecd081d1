// The bounded cache of remote pages (AGORA_CACHE, docs/cache.md): which
// copies of pages homed elsewhere this rank holds, and which to give up
// when there are too many. The policy only; the engines evict
// (ProtocolEngine::evict) and the hosts (runtime/cache/copy_cache.cpp, the simulator)
// connect the two.
//
// A copy is *resident* while its application view is open (read or write):
// the host reports every protection change of a remote page (note_access),
// so the cache sees installs, upgrades and drops without the engines
// telling it. Policies:
//   clock: second chance. A page gets its reference bit when installed and
//     whenever it faults again while resident (an upgrade to write); the
//     hand clears bits as it passes and proposes the first page without one.
//     (Loads and stores that do not fault are invisible: the fast path costs
//     nothing, so the bit records faults, not every use.)
//   fifo: the oldest installed page first.
// Either way the `protect_recent` pages installed last are never proposed:
// a thread that faulted on a page must get to use it before it can go.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>

#include "common/config.h"
#include "common/types.h"

namespace agora {

class PageCache {
 public:
  // capacity: most resident pages (0: unbounded, nothing is tracked).
  PageCache(size_t capacity, CachePolicy policy, size_t protect_recent);
  bool bounded() const { return capacity_ > 0; }
  size_t capacity() const { return capacity_; }
  size_t resident() const { return ring_.size(); }
  bool over() const { return bounded() && ring_.size() > capacity_; }
  bool holds(PageId page) const { return where_.count(page) != 0; }  // resident

  // A remote page's application view changed to `access`.
  void note_access(PageId page, Access access);
  // The next eviction candidate, or false if every resident page is among
  // the protected recent ones. Each call moves the hand on: proposing every
  // page takes resident() calls (clock: up to twice that, clearing bits).
  bool propose(PageId *victim);

 private:
  struct Slot {
    PageId page;
    uint64_t installed;  // install sequence number
    bool referenced;
  };
  using Ring = std::list<Slot>;
  void advance();

  size_t capacity_;
  CachePolicy policy_;
  size_t protect_recent_;
  uint64_t installs_ = 0;
  Ring ring_;            // in install order behind the hand
  Ring::iterator hand_;  // ring_.end() when empty
  std::unordered_map<PageId, Ring::iterator> where_;
};

// The smallest cache that lets every thread of a rank make progress: an
// access may touch a few pages at once (memcpy across a page boundary, a
// triad's three arrays) and must find them all resident together.
constexpr size_t kCacheMinPages = 64;

}  // namespace agora
