// Which slot of the bounded cache's frame pool holds each pooled copy of a
// remote page, and which slots are free (docs/cache.md). Bookkeeping only:
// the runtime maps the slots (platform::frame_pool_map); the simulator
// models what moving a frame does to its bytes (SimNode::replacing_frame).
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/types.h"

namespace agora {

class FrameSlots {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  explicit FrameSlots(uint32_t slots);
  uint32_t capacity() const { return (uint32_t)owner_.size(); }
  uint32_t free_slots() const { return free_; }
  bool any_held() const { return !pages_.empty(); }

  // The page's slot, or kNone.
  uint32_t slot_of(PageId page) const {
    auto it = pages_.find(page);
    return it == pages_.end() ? kNone : it->second.slot;
  }
  // Whether the application view maps the page's slot (else it maps the
  // page's own place in the memory file, with no access).
  bool mapped(PageId page) const {
    auto it = pages_.find(page);
    return it != pages_.end() && it->second.mapped;
  }
  void set_mapped(PageId page, bool mapped);
  // Gives `page`, which holds none, a slot: the one after its predecessor's
  // if that is free, so that a run's copies take consecutive slots and map
  // in one call; else the lowest free one (first fit: the slots in use stay
  // packed at the bottom of the pool, so that its memory, which is never
  // given back, grows to the most slots used at once and no further).
  // kNone if every slot is taken.
  uint32_t assign(PageId page);
  // Frees the page's slot; false if it held none.
  bool release(PageId page);
  // Appends the pages of [first, first+count) holding a slot, in order.
  void held_in(PageId first, PageId count, std::vector<PageId> *out) const;

  // A landing place: `count` consecutive free slots held by no page (a
  // one-sided read of a run lands there, and its copies are installed
  // without a copy of their bytes); kNone if there is no such run.
  uint32_t reserve_run(uint32_t count);
  bool reserved(uint32_t slot) const { return slot < owner_.size() && owner_[slot] == kReserved; }
  // A reserved slot becomes `page`'s (which holds none).
  void adopt(uint32_t slot, PageId page);
  // Frees a reserved slot no page adopted.
  void unreserve(uint32_t slot);

 private:
  static constexpr PageId kFree = ~PageId(0), kReserved = ~PageId(0) - 1;
  struct Held {
    uint32_t slot;
    bool mapped;
  };
  std::unordered_map<PageId, Held> pages_;
  std::vector<PageId> owner_;  // by slot: the page, or kFree
  uint32_t free_;
  uint32_t lowest_free_ = 0;  // no free slot below it
};

}  // namespace agora
