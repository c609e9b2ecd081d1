#include "memory/frame_slots.h"

#include <algorithm>

namespace agora {

FrameSlots::FrameSlots(uint32_t slots) : owner_(slots, kFree), free_(slots) {}

void FrameSlots::set_mapped(PageId page, bool mapped) {
  auto it = pages_.find(page);
  if (it != pages_.end()) it->second.mapped = mapped;
}

uint32_t FrameSlots::assign(PageId page) {
  if (free_ == 0 || pages_.count(page)) return kNone;
  uint32_t slot = kNone;
  auto before = page > 0 ? pages_.find(page - 1) : pages_.end();
  if (before != pages_.end() && before->second.slot + 1 < owner_.size() && owner_[before->second.slot + 1] == kFree)
    slot = before->second.slot + 1;
  if (slot == kNone) {  // a free slot exists: found at or above lowest_free_
    while (owner_[lowest_free_] != kFree) ++lowest_free_;
    slot = lowest_free_;
  }
  owner_[slot] = page;
  pages_[page] = Held{slot, false};
  --free_;
  return slot;
}

bool FrameSlots::release(PageId page) {
  auto it = pages_.find(page);
  if (it == pages_.end()) return false;
  const uint32_t slot = it->second.slot;
  pages_.erase(it);
  unreserve(slot);  // free again, as a reserved slot no page took
  return true;
}

uint32_t FrameSlots::reserve_run(uint32_t count) {
  const uint32_t slots = (uint32_t)owner_.size();
  if (count == 0 || count > free_) return kNone;
  // First fit, as assign: the lowest run of `count` free slots.
  for (uint32_t s = lowest_free_, run = 0; s < slots; ++s) {
    run = owner_[s] == kFree ? run + 1 : 0;
    if (run == count) {
      const uint32_t first = s + 1 - count;
      for (uint32_t i = first; i <= s; ++i) owner_[i] = kReserved;
      free_ -= count;
      return first;
    }
  }
  return kNone;
}

void FrameSlots::adopt(uint32_t slot, PageId page) {
  owner_[slot] = page;
  pages_[page] = Held{slot, false};
}

void FrameSlots::unreserve(uint32_t slot) {
  owner_[slot] = kFree;
  lowest_free_ = std::min(lowest_free_, slot);
  ++free_;
}

void FrameSlots::held_in(PageId first, PageId count, std::vector<PageId> *out) const {
  const size_t before = out->size();
  if (count <= pages_.size()) {  // whichever is shorter: the range or the pages held
    for (PageId p = first; p < first + count; ++p)
      if (pages_.count(p)) out->push_back(p);
    return;
  }
  for (const auto &held : pages_)
    if (held.first - first < count) out->push_back(held.first);
  std::sort(out->begin() + before, out->end());
}

}  // namespace agora
