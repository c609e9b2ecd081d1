// The program's heap in program mode: malloc & co of the program's own code
// (redirected by `ld --wrap`, see agora-program.wrap and program_start.c)
// allocate global memory homed on the calling rank, with a 16-byte header in
// front of each block (in global memory, so realloc and malloc_usable_size
// work from any rank). libc's and MPI's own allocations are not redirected.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "agora/agora.h"
#include "common/log.h"
#include "program/program_abi.h"
#include "program/program_state.h"
#include "runtime/runtime.h"

namespace agora {
Runtime *api_runtime();  // agora_c.cpp
}

namespace {
constexpr uint32_t kMagic = 0xa6041a11u;
constexpr size_t kHeader = 16;

struct Header {   // just below the pointer the program gets
  uint64_t size;  // bytes asked for (malloc_usable_size)
  uint32_t magic;
  uint32_t offset;  // from the start of the agora_malloc block
};
static_assert(sizeof(Header) == kHeader, "the header keeps 16-byte alignment");

std::atomic<uintptr_t> g_lo{0}, g_hi{0};                                // the global range, once started
std::atomic<agora::HeapPlacement> g_heap{agora::HeapPlacement::Local};  // AGORA_HEAP

Header *header_of(const void *p) { return (Header *)((uintptr_t)p - kHeader); }

bool in_range(const void *p) {
  uintptr_t a = (uintptr_t)p;
  if (a >= g_hi.load(std::memory_order_acquire)) return false;
  return a >= g_lo.load(std::memory_order_relaxed) && a < g_hi.load(std::memory_order_relaxed);
}

void *allocate(size_t alignment, size_t bytes) {
  if (bytes == 0) bytes = 1;  // a unique pointer, as libc gives
  size_t extra = kHeader + (alignment > kHeader ? alignment : 0);
  if (bytes > SIZE_MAX - extra) {
    errno = ENOMEM;
    return nullptr;
  }
  void *block = nullptr;
  agora::HeapPlacement heap = g_heap.load(std::memory_order_relaxed);
  if (heap != agora::HeapPlacement::Local && bytes >= agora::kHeapPlacedMin)
    agora_mem_malloc_placed(bytes + extra, heap == agora::HeapPlacement::Block ? AGORA_PLACE_BLOCK : AGORA_PLACE_CYCLIC,
                            0, &block);
  else
    agora_mem_malloc(bytes + extra, &block);
  if (!block) {
    errno = ENOMEM;
    return nullptr;
  }
  uintptr_t user = ((uintptr_t)block + kHeader + alignment - 1) & ~(uintptr_t)(alignment - 1);
  Header *h = header_of((void *)user);
  h->size = bytes;
  h->magic = kMagic;
  h->offset = (uint32_t)(user - (uintptr_t)block);
  return (void *)user;
}

// A pointer in the global range the program hands to free/realloc: one of
// ours, or the program's mistake.
bool valid_block(const void *p, const char *fn) {
  if (((uintptr_t)p & (kHeader - 1)) == 0 && agora_home_of(header_of(p)) >= 0 && header_of(p)->magic == kMagic)
    return true;
  agora::log_error(
      "%s(%p): not a block from malloc (global memory from agora_malloc/agora_alloc, "
      "or a pointer into a block?); ignored",
      fn, p);
  return false;
}
}  // namespace

namespace agora {
// Called once Agora runs, before the program's code does.
void program_heap_start(const AddressSpace &space, HeapPlacement heap) {
  g_heap.store(heap, std::memory_order_relaxed);
  g_lo.store(space.base(), std::memory_order_relaxed);
  g_hi.store(space.base() + space.size(), std::memory_order_release);
}
}  // namespace agora

extern "C" {

// Not in a fork() child: its copies of global blocks are private memory,
// and the global heap is the job's; the child allocates from libc (and a
// free of a copied block leaves it to the child's exit).
int agora_program_heap_active(void) {
  return agora::program_started() && !agora::program_finished() && !agora::Runtime::in_forked_child() ? 1 : 0;
}

int agora_program_heap_owns(const void *p) { return in_range(p); }

void *agora_program_malloc(size_t bytes) { return allocate(kHeader, bytes); }

void *agora_program_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) {
    errno = ENOMEM;
    return nullptr;
  }
  void *p = allocate(kHeader, n * size);
  if (p) std::memset(p, 0, n * size);  // a reused block is not zero
  return p;
}

void *agora_program_memalign(size_t alignment, size_t bytes) {
  if (alignment < kHeader) alignment = kHeader;
  if ((alignment & (alignment - 1)) != 0 || alignment > (1u << 30)) {
    errno = EINVAL;
    return nullptr;
  }
  return allocate(alignment, bytes);
}

void agora_program_free(void *p) {
  if (!p || !agora_program_heap_active()) return;  // after the job: left to process exit
  if (!valid_block(p, "free")) return;
  Header *h = header_of(p);
  h->magic = 0;  // a second free is then reported
  agora_mem_free((void *)((uintptr_t)p - h->offset));
}

void *agora_program_realloc(void *p, size_t bytes) {
  if (!p) return agora_program_malloc(bytes);
  if (bytes == 0) {
    agora_program_free(p);
    return nullptr;
  }
  if (!valid_block(p, "realloc")) {
    errno = EINVAL;
    return nullptr;
  }
  uint64_t old = header_of(p)->size;
  if (bytes <= old) return p;
  void *q = agora_program_malloc(bytes);
  if (!q) return nullptr;  // p stays valid, as libc's realloc leaves it
  std::memcpy(q, p, old);
  agora_program_free(p);
  return q;
}

void *agora_program_child_realloc(void *p, size_t bytes) {
  // A fork() child's copy of a global block: into libc's heap (the copy
  // itself is left to the child's exit). The header is checked locally: the
  // child has no runtime to ask.
  if (!agora::Runtime::in_forked_child()) return nullptr;  // after the job: the heap is gone
  const Header *h = header_of(p);
  if (((uintptr_t)p & (kHeader - 1)) != 0 || h->magic != kMagic) {
    errno = EINVAL;
    return nullptr;
  }
  void *q = std::malloc(bytes ? bytes : 1);  // libagora's malloc is libc's
  if (!q) {
    errno = ENOMEM;
    return nullptr;
  }
  std::memcpy(q, p, h->size < bytes ? h->size : bytes);
  return q;
}

size_t agora_program_usable_size(const void *p) {
  if (!p || !valid_block(p, "malloc_usable_size")) return 0;
  return header_of(p)->size;
}

}  // extern "C"
