// agora_flush and agora_flush_all: the arguments checked here, the rest is
// the protocol's (ProtocolEngine::flush; docs/flush.md).
#include "common/log.h"
#include "platform/platform.h"
#include "runtime/runtime.h"
#include "runtime/runtime_internal.h"
#include "runtime/service_timing.h"

namespace agora {

namespace {
// Most pages a flush lists one by one; a larger region asks the engine which
// of its pages it holds anything of (ProtocolEngine::flush_pages_within).
constexpr PageId kFlushDensePages = 4096;
// Flushes in a row, by this thread, that had nothing to wait for (CASE-3/4:
// a busy-wait loop that sees no change).
thread_local unsigned tl_idle_flushes = 0;
}  // namespace

// A busy-wait on flush that sees no change must not hold its core against
// the ranks it waits for (oversubscribed runs, and the rank's own service
// thread): after kIdlePollsBeforeYield idle flushes in a row, each further
// one serves a message if it can and yields the core, as an idle wait does
// (a nap instead measured slower on a loaded machine: a sleeping rank wakes
// late, and acks wait for it). Counted once the flush ended, without the lock.
void Runtime::after_flush(bool idle) {
  if (!idle) {
    tl_idle_flushes = 0;
    return;
  }
  // Serve a message: notices and acks wait for this rank's attention.
  if (lock_.try_lock()) {
    poll_locked(1);
    lock_.unlock();
  }
  if (++tl_idle_flushes < service_timing::kIdlePollsBeforeYield) return;
  tl_idle_flushes = service_timing::kIdlePollsBeforeYield;  // no wrap-around
  platform::thread_yield();
}

int Runtime::flush(const void *ptr, size_t bytes) {
  const uintptr_t addr = (uintptr_t)ptr;
  if (bytes == 0) {
    log_error("agora_flush(%p, 0): the region is empty (flush at least one byte, or use agora_flush_all)", ptr);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  const uintptr_t end = addr + bytes;
  if (end < addr) {
    log_error("agora_flush(%p, %zu): the region wraps around the address space", ptr, bytes);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  const size_t page = page_size();
  // Checked with nothing stored, and without a walk where it can be: the
  // region may be huge.
  if (uintptr_t at = space_->first_unallocated(addr, end)) {
    log_error(
        "agora_flush(%p, %zu): %p is not in allocated global memory (global memory is [%p, %p); "
        "flush only what agora_malloc and friends returned)",
        ptr, bytes, (void *)at, (void *)space_->base(), (void *)(space_->base() + space_->size()));
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  // A region of more than kFlushDensePages pages whose page ids run on
  // (one range, no window boundary inside) is flushed sparsely: only the
  // pages the engine would act on get a range, so a 64 GiB region of which
  // one page was touched costs that page, not 16 million entries.
  const PageId first = space_->page_of(addr), last = space_->page_of(end - 1);
  const bool sparse = last - first + 1 > kFlushDensePages && last - first == (end - 1) / page - addr / page;
  auto range_of = [&](PageId p, std::vector<StoreRange> *out) {
    const uintptr_t from = p == first ? addr : (addr & ~(uintptr_t)(page - 1)) + (p - first) * page;
    const uintptr_t page_end = (from | (page - 1)) + 1;
    const uintptr_t stop = page_end < end && page_end != 0 ? page_end : end;
    out->push_back({p, (uint32_t)(from % page), (uint32_t)(stop - from)});
  };
  std::vector<StoreRange> ranges;
  if (!sparse)
    for (uintptr_t a = addr; a < end;) {
      const uintptr_t page_end = (a | (page - 1)) + 1;
      const uintptr_t stop = page_end < end && page_end != 0 ? page_end : end;
      ranges.push_back({space_->page_of(a), (uint32_t)(a % page), (uint32_t)(stop - a)});
      a = stop;
    }
  WaitNote note{WaitKind::Flush, addr, bytes};
  bool idle = false;
  int status = timed_sync(note, [&](Waiter *w) {
    stats_.flush_calls++;
    if (sparse) {
      std::vector<PageId> held;
      engine_->flush_pages_within(first, last + 1, &held);
      for (PageId p : held) range_of(p, &ranges);
    }
    engine_->flush(ranges, [w] { w->complete(AGORA_OK); });
    idle = w->done();
    return AGORA_OK;
  });
  after_flush(idle);
  return status;
}

int Runtime::flush_all() {
  WaitNote note{WaitKind::Flush, 0, 0};
  bool idle = false;
  int status = timed_sync(note, [&](Waiter *w) {
    stats_.flush_calls++;
    engine_->flush_all([w] { w->complete(AGORA_OK); });
    idle = w->done();
    return AGORA_OK;
  });
  after_flush(idle);
  return status;
}

}  // namespace agora
