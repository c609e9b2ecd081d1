// agora_flush and agora_flush_all: the arguments checked here, the rest is
// the protocol's (ProtocolEngine::flush; docs/flush.md).
#include "common/log.h"
#include "runtime/runtime.h"
#include "runtime/runtime_internal.h"

namespace agora {

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
  std::vector<StoreRange> ranges;
  for (uintptr_t a = addr; a < end;) {
    if (!space_->maybe_allocated(a)) {
      log_error("agora_flush(%p, %zu): %p is not in allocated global memory (global memory is [%p, %p); "
                "flush only what agora_malloc and friends returned)",
                ptr, bytes, (void *)a, (void *)space_->base(), (void *)(space_->base() + space_->size()));
      return AGORA_ERR_INVALID_ARGUMENT;
    }
    const uintptr_t page_end = (a | (page - 1)) + 1;
    const uintptr_t stop = page_end < end && page_end != 0 ? page_end : end;
    ranges.push_back({space_->page_of(a), (uint32_t)(a % page), (uint32_t)(stop - a)});
    a = stop;
  }
  WaitNote note{WaitKind::Flush, addr, bytes};
  return timed_sync(note, [&](Waiter *w) {
    stats_.flush_calls++;
    engine_->flush(ranges, [w] { w->complete(AGORA_OK); });
    return AGORA_OK;
  });
}

int Runtime::flush_all() {
  WaitNote note{WaitKind::Flush, 0, 0};
  return timed_sync(note, [&](Waiter *w) {
    stats_.flush_calls++;
    engine_->flush_all([w] { w->complete(AGORA_OK); });
    return AGORA_OK;
  });
}

}  // namespace agora
