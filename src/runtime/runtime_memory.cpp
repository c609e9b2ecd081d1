// Allocation: collective (agora_alloc, checked to be the same call on every
// rank), from this rank's arena (agora_malloc), and agora_free of either
// kind, where a block of another rank is freed by its owner through
// MemoryService (src/sync/memory_service.h; placed allocations:
// placed_memory.cpp).
#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"

namespace agora {

void *Runtime::alloc_collective(uint64_t bytes, Placement placement, Rank on_rank) {
  PageId first = 0, count = 0;
  bool ok;
  {
    std::lock_guard<std::mutex> g(lock_);
    ok = space_->collective_reserve(bytes, placement, on_rank, &first, &count);
    // Open this rank's home pages before any rank can use them.
    if (ok) open_home_pages(space_->collective_run(first, count), "agora_alloc", bytes);
  }
  // Every rank must have asked for the same thing; this also keeps any rank
  // from touching the memory before its homes have opened their pages. The
  // size travels as two 32-bit halves: max(x) == -max(-x) holds only while
  // -x cannot overflow.
  int64_t hi = (int64_t)(bytes >> 32), lo = (int64_t)(bytes & 0xffffffffu);
  int64_t v[10] = {hi, lo, (int64_t)placement, on_rank, ok, -hi, -lo, -(int64_t)placement, -on_rank, -(int64_t)ok};
  std::vector<int64_t> check(v, v + 10);
  reduce(check.data(), 10, ReduceType::Int64, ReduceOp::Max, CollectiveKind::Alloc);
  bool same_bytes = check[0] == -check[5] && check[1] == -check[6];
  if (!same_bytes || check[2] != -check[7] || check[3] != -check[8])
    fatal(
        "agora_alloc is collective: ranks called it with different arguments (bytes %s, "
        "%llu here; placement %lld..%lld; rank %lld..%lld)",
        same_bytes ? "equal" : "differ", (unsigned long long)bytes, (long long)-check[7], (long long)check[2],
        (long long)-check[8], (long long)check[3]);
  if (check[4] != -check[9])
    fatal("agora_alloc(%llu bytes): succeeded on some ranks only (out of memory for its records?)",
          (unsigned long long)bytes);
  if (!ok) {
    if (rank() == 0) {
      uint64_t page = page_size();
      uint64_t capacity = space_->collective_capacity_pages() * page;
      uint64_t free_bytes = capacity - space_->collective_pages_used() * page;
      if (bytes > capacity)
        log_error(
            "agora_alloc(%llu bytes): larger than the whole collective region (%llu bytes, "
            "a quarter of AGORA_MEMORY=%llu); %llu bytes are free; %s",
            (unsigned long long)bytes, (unsigned long long)capacity, (unsigned long long)space_->size(),
            (unsigned long long)free_bytes, raise_memory_hint().c_str());
      else
        log_error(
            "agora_alloc(%llu bytes): collective global memory exhausted (%llu bytes free of "
            "%llu); %s",
            (unsigned long long)bytes, (unsigned long long)free_bytes, (unsigned long long)capacity,
            raise_memory_hint().c_str());
    }
    return nullptr;
  }
  return observe_allocation(AllocKind::Collective, (void *)space_->addr_of(first), bytes, placement, on_rank);
}

void *Runtime::malloc_local(uint64_t bytes) {
  std::lock_guard<std::mutex> g(lock_);
  uint64_t off = arena_->allocate(bytes);
  if (off == UINT64_MAX) {
    uint64_t heap = space_->arena_pages() * page_size();
    if (bytes > heap)
      log_error(
          "agora_malloc(%llu bytes): larger than this rank's whole global heap (%llu bytes: "
          "half of AGORA_MEMORY over %d ranks); %llu bytes are free; %s",
          (unsigned long long)bytes, (unsigned long long)heap, compute_nranks(),
          (unsigned long long)arena_->bytes_free(), raise_memory_hint().c_str());
    else
      log_error(
          "agora_malloc(%llu bytes): this rank's global heap is exhausted (%llu bytes free "
          "of %llu, possibly fragmented); %s",
          (unsigned long long)bytes, (unsigned long long)arena_->bytes_free(), (unsigned long long)heap,
          raise_memory_hint().c_str());
    return nullptr;
  }
  return observe_allocation(AllocKind::Local, (void *)(space_->base() + off), bytes);
}

int Runtime::free_local(uint64_t offset) {
  switch (arena_->release(offset)) {
    case ArenaAllocator::FreeResult::Ok:
      return 0;
    case ArenaAllocator::FreeResult::InsideBlock:
      log_error("agora_free(%p): not the start of an allocation", (void *)(space_->base() + offset));
      return AGORA_ERR_BAD_POINTER;
    default:
      log_error("agora_free(%p): not allocated (double free?)", (void *)(space_->base() + offset));
      return AGORA_ERR_BAD_POINTER;
  }
}

int Runtime::free_any(void *ptr) {
  uintptr_t addr = (uintptr_t)ptr;
  if (!ptr) return 0;
  if (!space_->contains(addr)) {
    log_error("agora_free(%p): not global memory (use free() for malloc'd memory)", ptr);
    return AGORA_ERR_BAD_POINTER;
  }
  if (space_->in_placed_region(space_->page_of(addr))) return free_placed(addr);
  Rank owner = space_->arena_owner(addr);
  if (owner < 0) {
    log_error("agora_free(%p): inside a collective allocation; those live until agora_finalize", ptr);
    return AGORA_ERR_BAD_POINTER;
  }
  uint64_t offset = addr - space_->base();
  if (owner == rank()) {
    std::lock_guard<std::mutex> g(lock_);
    return free_local(offset);
  }
  // The owner frees it, after a release (MemoryService: this rank's writes
  // to the block must reach it first) and says why if it cannot.
  Waiter w;
  WaitNote note{WaitKind::Free, (uint64_t)owner};
  return noted_wait(note, w, [&] {
    memory_->free_remote(owner, offset, &w);
    return AGORA_OK;
  });
}

}  // namespace agora
