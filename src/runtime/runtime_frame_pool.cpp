// The bounded cache's frame pool (docs/cache.md): copies of remote pages
// live in slots of a memory object that stays allocated, each mapped over
// its page's place in the application view, instead of at the page's own
// place in the memory file, whose memory an eviction gives back and the
// next copy has the kernel allocate and zero again (~3 us a page,
// bench/cache/frame_cost.c).
//
// A page takes a slot when the engine is about to overwrite its whole frame
// while no thread can reach it (replacing_frame, at an install); the slot is
// mapped in when the page is opened (protect_run) and given back, with the
// memory file mapped over the page again, when the copy is evicted, freed,
// or closed with a frame the engine does not need (frame_in_use), between
// engine calls (cache_trim). When every slot is taken a copy stays at its
// own place, as without the pool.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "runtime/runtime.h"

namespace agora {

namespace {
// Slots beyond the cache's bound: copies installed between two trims (a
// fetched run), and closed copies whose frames the engine still needs.
constexpr uint64_t kSpareSlots = 128;
}  // namespace

void Runtime::open_frame_pool(uint64_t cache_pages) {
  if (config_.cache_frames != CacheFrames::Pool || memory_server_) return;
  const uint64_t slots = cache_pages + cache_pages / 8 + kSpareSlots;
  std::string error;
  if (slots > UINT32_MAX - 1 || !platform::frame_pool_open(slots, page_size(), &frame_pool_, &error) ||
      !platform::vm_exclude_pool_from_fork(frame_pool_, &error)) {
    if (error.empty()) error = "too many slots";
    log_debug("cache frames: given back at eviction (no pool: %s)", error.c_str());
    platform::frame_pool_close(&frame_pool_);
    return;
  }
  frame_slots_.emplace((uint32_t)slots);
  log_debug("cache frames: a pool of %llu slots (%s)", (unsigned long long)slots,
            platform::human_bytes(slots * page_size()).c_str());
}

void Runtime::close_frame_pool() {
  frame_slots_.reset();
  platform::frame_pool_close(&frame_pool_);
}

std::byte *Runtime::frame(PageId page) {
  if (frame_slots_ && frame_slots_->any_held()) {
    const uint32_t slot = frame_slots_->slot_of(page);
    if (slot != FrameSlots::kNone) return frame_pool_.view + (size_t)slot * page_size();
  }
  return range_.service_view + page * page_size();
}

void Runtime::replacing_frame(PageId page) {
  // Only a copy no thread can reach may move: its view is not remapped
  // until it is opened.
  if (!frame_slots_ || !cache_ || cache_->holds(page) || space_->home_of(page) == rank() ||
      frame_slots_->slot_of(page) != FrameSlots::kNone)
    return;
  // A page of the run being installed takes its reserved slot: where a
  // one-sided read landed, the install then finds its bytes there already.
  if (landing_.slot != FrameSlots::kNone && page - landing_.first < landing_.count) {
    const uint32_t slot = landing_.slot + (uint32_t)(page - landing_.first);
    if (frame_slots_->reserved(slot)) {
      frame_slots_->adopt(slot, page);
      return;
    }
  }
  if (frame_slots_->assign(page) == FrameSlots::kNone) stats_.cache_frames_unpooled++;
}

void Runtime::land(PageId first, uint32_t count, uint32_t slot) {
  end_landing();
  landing_ = Landing{first, count, slot};
}

void Runtime::end_landing() {
  if (landing_.slot != FrameSlots::kNone)
    for (uint32_t i = 0; i < landing_.count; ++i)
      if (frame_slots_->reserved(landing_.slot + i)) frame_slots_->unreserve(landing_.slot + i);
  landing_ = Landing{};
}

bool Runtime::pool_frames_held() const { return frame_slots_ && frame_slots_->any_held(); }

void Runtime::protect_pooled(PageId first, PageId count, Access access) {
  // Pages holding a slot not mapped yet are mapped in (consecutive slots in
  // one call); the rest change protection as usual.
  auto to_map = [&](PageId p) { return access != Access::None && frame_slots_->slot_of(p) != FrameSlots::kNone &&
                                       !frame_slots_->mapped(p); };
  for (PageId p = first, end = first + count; p < end;) {
    const bool map = to_map(p);
    const uint32_t slot = frame_slots_->slot_of(p);
    PageId n = 1;
    if (map)
      while (p + n < end && to_map(p + n) && frame_slots_->slot_of(p + n) == slot + n) ++n;
    else
      while (p + n < end && !to_map(p + n)) ++n;
    void *addr = (void *)space_->addr_of(p);
    if (map) {
      if (!platform::frame_pool_map(frame_pool_, addr, slot, n, access)) {
        const int err = errno;
        fatal("mapping %llu cached page(s) at %p from the frame pool failed: %s%s", (unsigned long long)n, addr,
              std::strerror(err), err == ENOMEM ? map_limit_advice().c_str() : "");
      }
      for (PageId q = p; q < p + n; ++q) frame_slots_->set_mapped(q, true);
      stats_.cache_frames_pooled += n;
    } else {
      protect_view(addr, n, access);
    }
    p += n;
  }
}

void Runtime::release_frames(const std::vector<PageId> &pages, std::vector<PageId> *unpooled) {
  // `pages` sorted: the memory file goes back over runs of mapped slots
  // (consecutive addresses) in one call each.
  const size_t page = page_size();
  for (size_t i = 0; i < pages.size();) {
    const PageId p = pages[i];
    if (frame_slots_->slot_of(p) == FrameSlots::kNone) {
      if (unpooled) unpooled->push_back(p);
      ++i;
      continue;
    }
    size_t j = i + 1;
    const uintptr_t addr = space_->addr_of(p);
    while (j < pages.size() && pages[j] == pages[j - 1] + 1 && space_->addr_of(pages[j]) == addr + (j - i) * page &&
           frame_slots_->slot_of(pages[j]) != FrameSlots::kNone)
      ++j;
    bool any_mapped = false;
    for (size_t k = i; k < j; ++k) any_mapped |= frame_slots_->mapped(pages[k]);
    if (any_mapped) {
      std::string error;
      if (!platform::vm_map_back(range_, (void *)addr, (j - i) * page, p * page) ||
          !write_tracker_.register_again((void *)addr, (j - i) * page, &error))
        fatal("cannot map global memory back over %zu evicted page(s) at %p: %s", j - i, (void *)addr,
              error.empty() ? std::strerror(errno) : error.c_str());
    }
    for (size_t k = i; k < j; ++k) frame_slots_->release(pages[k]);
    i = j;
  }
}

void Runtime::reserve_for_run(PageId first, PageId count) {
  // A reply's run: consecutive slots for its copies, the lowest that fit
  // (a copy alone takes the slot after its predecessor's, or the lowest).
  if (landing_.slot != FrameSlots::kNone || count < 2 || count > UINT32_MAX) return;  // a read landed already
  const uint32_t slot = frame_slots_->reserve_run((uint32_t)count);
  if (slot != FrameSlots::kNone) land(first, (uint32_t)count, slot);
}

void Runtime::release_unused_frames() {
  // Copies closed since the last call (invalidated) whose frames the engine
  // does not need: their slots go back. A dirty one is asked again later.
  if (closed_copies_.empty()) return;
  std::sort(closed_copies_.begin(), closed_copies_.end());
  closed_copies_.erase(std::unique(closed_copies_.begin(), closed_copies_.end()), closed_copies_.end());
  std::vector<PageId> unused, kept;
  for (PageId p : closed_copies_) {
    if (frame_slots_->slot_of(p) == FrameSlots::kNone || cache_->holds(p)) continue;  // gone, or open again
    (engine_->frame_in_use(p) ? kept : unused).push_back(p);
  }
  closed_copies_.swap(kept);
  release_frames(unused, nullptr);
}

void Runtime::forget_frames(PageId first, PageId count) {
  if (!pool_frames_held()) return;
  std::vector<PageId> held;
  frame_slots_->held_in(first, count, &held);
  release_frames(held, nullptr);
}

}  // namespace agora
