// agora_malloc_placed and the free of what it returns: non-collective
// allocations homed block, cyclic or on one rank. Rank 0 sequences them
// through MemoryService (src/sync/memory_service.h); here are the runtime's
// parts: the callers' waits (noted for the hang watch), their error
// messages, and what a run's start and end do to this rank's memory.
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/status.h"
#include "observe/observe.h"
#include "runtime/runtime.h"

namespace agora {

// ---- the caller's side ------------------------------------------------------------

void *Runtime::malloc_placed(uint64_t bytes, Placement placement, Rank on_rank) {
  const uint64_t page = page_size();
  // Rounded up without overflow: (bytes + page - 1) wraps for sizes near 2^64.
  uint64_t pages = bytes / page + (bytes % page != 0);
  if (pages == 0) pages = 1;
  const uint64_t capacity = space_->placed_capacity_pages();
  if (pages > capacity) {
    log_error(
        "agora_malloc_placed(%llu bytes): larger than the whole placed region (%llu bytes, a "
        "quarter of AGORA_MEMORY=%llu); %s",
        (unsigned long long)bytes, (unsigned long long)capacity * page, (unsigned long long)space_->size(),
        raise_memory_hint().c_str());
    return nullptr;
  }
  PlacedRequest req;
  WaitNote note{WaitKind::Placed, 0};
  int status = noted_wait(note, req.w, [&] {
    memory_->placed_alloc(pages, placement, on_rank, &req);
    return AGORA_OK;
  });
  if (status != AGORA_OK) {
    log_error(
        "agora_malloc_placed(%llu bytes): the placed region is exhausted (%llu bytes free of "
        "%llu, possibly fragmented); free placed allocations or %s",
        (unsigned long long)bytes, (unsigned long long)req.free_pages * page, (unsigned long long)capacity * page,
        raise_memory_hint().c_str());
    return nullptr;
  }
  return observe_allocation(AllocKind::Placed, (void *)space_->addr_of(req.first), bytes, placement, on_rank);
}

int Runtime::free_placed(uintptr_t addr) {
  PageId first = space_->page_of(addr);
  if (addr % page_size() != 0) {
    if (space_->maybe_allocated(addr))
      log_error("agora_free(%p): not the start of an allocation", (void *)addr);
    else
      log_error("agora_free(%p): not allocated (double free?)", (void *)addr);
    return AGORA_ERR_BAD_POINTER;
  }
  // MemoryService releases first: diffs this rank sent earlier must reach
  // their homes before the homes forget the pages.
  PlacedRequest req;
  WaitNote note{WaitKind::Placed, 1};
  int status = noted_wait(note, req.w, [&] {
    memory_->placed_free(first, &req);
    return AGORA_OK;
  });
  if (status == MemoryService::kInsideRun) {
    log_error("agora_free(%p): not the start of an allocation", (void *)addr);
    return AGORA_ERR_BAD_POINTER;
  }
  if (status != AGORA_OK) {
    log_error("agora_free(%p): not allocated (double free?)", (void *)addr);
    return AGORA_ERR_BAD_POINTER;
  }
  return AGORA_OK;
}

// ---- every rank: MemoryService's hooks (the engine has been told already) ----------

void Runtime::placed_opened(const CollectiveRun &run) {
  if (!space_->placed_insert(run))
    fatal(
        "agora_malloc_placed: cannot record the allocation of pages %llu..+%llu (out of memory, "
        "or overlapping a live one)",
        (unsigned long long)run.first, (unsigned long long)run.count);
  open_home_pages(run, "agora_malloc_placed", run.count * page_size());
  one_sided_.placed_opened(run);
}

void Runtime::placed_closed(PageId first, PageId count) {
  CollectiveRun removed;
  if (!space_->placed_remove(first, &removed))
    fatal("agora_free: cannot drop the record of pages %llu..+%llu (out of memory?)", (unsigned long long)first,
          (unsigned long long)count);
  home_writes_.untrack(first, count);
  one_sided_.placed_closed(first, count);
  cache_.forget(first, count);  // no copies of freed pages
  void *addr = (void *)space_->addr_of(first);
  if (!platform::vm_protect(addr, count * page_size(), Access::None) ||
      !platform::vm_discard(range_, first * page_size(), count * page_size()))
    fatal("agora_free(%p): cannot close and zero its %llu pages: %s", addr, (unsigned long long)count,
          system_error_text(errno));
}

}  // namespace agora
