#include "memory/page_cache.h"

#include <algorithm>

namespace agora {

PageCache::PageCache(size_t capacity, CachePolicy policy, size_t protect_recent)
    : capacity_(capacity), policy_(policy), protect_recent_(std::min(protect_recent, capacity ? capacity - 1 : 0)) {
  hand_ = ring_.end();
}

void PageCache::note_access(PageId page, Access access) {
  if (!bounded()) return;
  auto it = where_.find(page);
  if (access == Access::None) {
    if (it == where_.end()) return;
    if (hand_ == it->second) advance();
    if (hand_ == it->second) hand_ = ring_.end();  // it was the only one
    ring_.erase(it->second);
    where_.erase(it);
    return;
  }
  if (it != where_.end()) {  // resident already: faulted again (read -> write)
    it->second->referenced = true;
    return;
  }
  // New pages go just behind the hand: the last the hand reaches.
  Ring::iterator at = ring_.insert(hand_ == ring_.end() ? ring_.end() : hand_, {page, ++installs_, true});
  if (hand_ == ring_.end()) hand_ = at;
  where_[page] = at;
}

void PageCache::advance() {
  if (ring_.empty()) {
    hand_ = ring_.end();
    return;
  }
  if (hand_ != ring_.end()) ++hand_;
  if (hand_ == ring_.end()) hand_ = ring_.begin();
}

bool PageCache::propose(PageId *victim) {
  if (ring_.empty()) return false;
  if (hand_ == ring_.end()) hand_ = ring_.begin();
  // Two passes at most: the first may only clear reference bits.
  for (size_t step = 0; step < 2 * ring_.size(); ++step) {
    Slot &s = *hand_;
    const bool recent = installs_ - s.installed < protect_recent_;
    if (recent || (policy_ == CachePolicy::Clock && s.referenced)) {
      if (!recent) s.referenced = false;
      advance();
      continue;
    }
    *victim = s.page;
    advance();
    return true;
  }
  return false;
}

}  // namespace agora
