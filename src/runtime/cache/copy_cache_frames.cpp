// The bounded cache's frame pool (docs/cache.md): copies of remote pages
// live in slots of a memory object that stays allocated, each mapped over
// its page's place in the application view, instead of at the page's own
// place in the memory file, whose memory an eviction gives back and the
// next copy has the kernel allocate and zero again (~3 us a page,
// bench/cache/frame_cost.c).
//
// A page takes a slot when the engine is about to overwrite its whole frame
// while no thread can reach it (replacing_frame, at an install); the slot is
// mapped in when the page is opened (the runtime's protect_run calls
// protect_pooled) and given back, with the memory file mapped over the page
// again, when the copy is evicted, freed, or closed with a frame the engine
// does not need (frame_in_use), between engine calls (trim). When every
// slot is taken a copy stays at its own place, as without the pool.
#include <algorithm>

#include "common/log.h"
#include "runtime/cache/copy_cache.h"

namespace agora {

namespace {
// Slots beyond the cache's bound: copies installed between two trims (a
// fetched run), and closed copies whose frames the engine still needs.
constexpr uint64_t kSpareSlots = 128;
}  // namespace

void CopyCache::open_frame_pool(const Config &config, uint64_t cache_pages, bool memory_server) {
  if (config.cache_frames != CacheFrames::Pool || memory_server) return;
  const uint64_t slots = cache_pages + cache_pages / 8 + kSpareSlots;
  std::string error;
  if (slots > UINT32_MAX - 1 || !host_.pool_open(slots, &pool_, &error)) {
    if (error.empty()) error = "too many slots";
    log_debug("cache frames: given back at eviction (no pool: %s)", error.c_str());
    host_.pool_close(&pool_);
    return;
  }
  slots_.emplace((uint32_t)slots);
  log_debug("cache frames: a pool of %llu slots (%s)", (unsigned long long)slots,
            human_bytes(slots * host_.page_size()).c_str());
}

void CopyCache::close_frame_pool() {
  slots_.reset();
  host_.pool_close(&pool_);
}

std::byte *CopyCache::pooled_frame(PageId page) const {
  if (!pool_frames_held()) return nullptr;
  const uint32_t slot = slots_->slot_of(page);
  return slot != FrameSlots::kNone ? slot_frames(slot) : nullptr;
}

void CopyCache::replacing_frame(PageId page) {
  // Only a copy no thread can reach may move: its view is not remapped
  // until it is opened.
  if (!slots_ || !copies_ || copies_->holds(page) || host_.home_of(page) == host_.rank() ||
      slots_->slot_of(page) != FrameSlots::kNone)
    return;
  // A page of the run being installed takes its reserved slot: where a
  // one-sided read landed, the install then finds its bytes there already.
  if (landing_.slot != FrameSlots::kNone && page - landing_.first < landing_.count) {
    const uint32_t slot = landing_.slot + (uint32_t)(page - landing_.first);
    if (slots_->reserved(slot)) {
      slots_->adopt(slot, page);
      return;
    }
  }
  if (slots_->assign(page) == FrameSlots::kNone) host_.stats().cache_frames_unpooled++;
}

bool CopyCache::fill_from_pool(PageId first, PageId count) {
  if (!slots_) return false;
  reserve_for_run(first, count);
  return landing_.slot != FrameSlots::kNone || slots_->free_slots() >= count;
}

uint32_t CopyCache::reserve_landing(uint32_t count) { return slots_ ? slots_->reserve_run(count) : FrameSlots::kNone; }

void CopyCache::unreserve_landing(uint32_t slot, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) slots_->unreserve(slot + i);
}

void CopyCache::land(PageId first, uint32_t count, uint32_t slot) {
  end_landing();
  landing_ = Landing{first, count, slot};
}

void CopyCache::end_landing() {
  if (landing_.slot != FrameSlots::kNone)
    for (uint32_t i = 0; i < landing_.count; ++i)
      if (slots_->reserved(landing_.slot + i)) slots_->unreserve(landing_.slot + i);
  landing_ = Landing{};
}

void CopyCache::protect_pooled(PageId first, PageId count, Access access) {
  // Pages holding a slot not mapped yet are mapped in (consecutive slots in
  // one call); the rest change protection as usual.
  auto to_map = [&](PageId p) {
    return access != Access::None && slots_->slot_of(p) != FrameSlots::kNone && !slots_->mapped(p);
  };
  for (PageId p = first, end = first + count; p < end;) {
    const bool map = to_map(p);
    const uint32_t slot = slots_->slot_of(p);
    PageId n = 1;
    if (map)
      while (p + n < end && to_map(p + n) && slots_->slot_of(p + n) == slot + n) ++n;
    else
      while (p + n < end && !to_map(p + n)) ++n;
    void *addr = (void *)host_.view_addr(p);
    if (map) {
      host_.pool_map(pool_, addr, slot, n, access);
      for (PageId q = p; q < p + n; ++q) slots_->set_mapped(q, true);
      host_.stats().cache_frames_pooled += n;
    } else {
      host_.protect_view(addr, n, access);
    }
    p += n;
  }
}

void CopyCache::release_frames(const std::vector<PageId> &pages, std::vector<PageId> *unpooled) {
  // `pages` sorted: the memory file goes back over runs of mapped slots
  // (consecutive addresses) in one call each.
  const size_t page = host_.page_size();
  for (size_t i = 0; i < pages.size();) {
    const PageId p = pages[i];
    if (slots_->slot_of(p) == FrameSlots::kNone) {
      if (unpooled) unpooled->push_back(p);
      ++i;
      continue;
    }
    size_t j = i + 1;
    const uintptr_t addr = host_.view_addr(p);
    while (j < pages.size() && pages[j] == pages[j - 1] + 1 && host_.view_addr(pages[j]) == addr + (j - i) * page &&
           slots_->slot_of(pages[j]) != FrameSlots::kNone)
      ++j;
    bool any_mapped = false;
    for (size_t k = i; k < j; ++k) any_mapped |= slots_->mapped(pages[k]);
    if (any_mapped) host_.map_back((void *)addr, p, j - i);
    for (size_t k = i; k < j; ++k) slots_->release(pages[k]);
    i = j;
  }
}

void CopyCache::reserve_for_run(PageId first, PageId count) {
  // A reply's run: consecutive slots for its copies, the lowest that fit
  // (a copy alone takes the slot after its predecessor's, or the lowest).
  if (landing_.slot != FrameSlots::kNone || count < 2 || count > UINT32_MAX) return;  // a read landed already
  const uint32_t slot = slots_->reserve_run((uint32_t)count);
  if (slot != FrameSlots::kNone) land(first, (uint32_t)count, slot);
}

void CopyCache::release_unused_frames() {
  // Copies closed since the last call (invalidated) whose frames the engine
  // does not need: their slots go back. A dirty one is asked again later.
  if (closed_copies_.empty()) return;
  std::sort(closed_copies_.begin(), closed_copies_.end());
  closed_copies_.erase(std::unique(closed_copies_.begin(), closed_copies_.end()), closed_copies_.end());
  std::vector<PageId> unused, kept;
  for (PageId p : closed_copies_) {
    if (slots_->slot_of(p) == FrameSlots::kNone || copies_->holds(p)) continue;  // gone, or open again
    (host_.frame_in_use(p) ? kept : unused).push_back(p);
  }
  closed_copies_.swap(kept);
  release_frames(unused, nullptr);
}

void CopyCache::forget_frames(PageId first, PageId count) {
  if (!pool_frames_held()) return;
  std::vector<PageId> held;
  slots_->held_in(first, count, &held);
  release_frames(held, nullptr);
}

}  // namespace agora
