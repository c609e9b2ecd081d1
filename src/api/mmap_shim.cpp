// Memory the program maps, in program mode (docs/programs.md, "Memory the
// program maps"): the program's own mmap, mmap64, munmap, mremap, msync,
// mprotect and madvise (redirected by `ld --wrap`,
// src/program/agora-program.wrap) give and take global memory, so that a
// mapping made by main can be handed to threads on every rank. Agora's,
// MPI's and libc's own calls keep the real functions (--wrap rewrites only
// the executable's references).
//
// A mapping is one agora_mem_malloc_placed run (homed like the program's
// large malloc blocks: AGORA_HEAP) whose first page is a header in global
// memory; the program gets the page after it. Any rank finds the header of
// any address in the mapping through the placed runs every rank records
// (looked up without a lock), so munmap and mremap work from every rank.
// A file mapping is a copy of the file's bytes, read on the calling rank;
// a writable MAP_SHARED file mapping is refused: its stores could reach the
// file only at munmap, not as the program expects (read() seeing them, the
// kernel writing them at exit).
//
// Before Agora starts (the program's early constructors) the calls are the
// real ones; after the job has ended the real ones again, except on what
// was global memory, which is left to the process's exit.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <memory>

#include "agora/agora.h"
#include "common/log.h"
#include "program/program_abi.h"
#include "program/program_descriptors.h"
#include "program/program_state.h"
#include "runtime/runtime.h"

namespace agora {
Runtime *api_runtime();    // agora_c.cpp
bool shim_runtime_live();  // agora_c.cpp
}  // namespace agora

extern "C" {
void *__real_mmap(void *, size_t, int, int, int, off_t);
void *__real_mmap64(void *, size_t, int, int, int, off64_t);
int __real_munmap(void *, size_t);
void *__real_mremap(void *, size_t, size_t, int, ...);
int __real_msync(void *, size_t, int);
int __real_mprotect(void *, size_t, int);
int __real_madvise(void *, size_t, int);
// The program's descriptors are job-wide (program/program_descriptors.cpp).
ssize_t __wrap_pread(int, void *, size_t, off_t);
int __wrap_fstat(int, struct stat *);
}

namespace {
using agora::log_error;

constexpr uint64_t kMagic = 0xa6041a3a70c0ffeeull;
constexpr size_t kPage = 4096;  // the header's size; global pages are at least this

struct MapHeader {    // the page just below the program's mapping
  uint64_t magic;     // kMagic while the mapping lives
  uint64_t self;      // this header's address: a mapping's data cannot forge it
  uint64_t start;     // bytes unmapped at the head (munmap of a head keeps them)
  uint64_t length;    // end of the mapping's bytes (whole pages; munmap of a tail, mremap move it)
  uint64_t capacity;  // bytes allocated after the header
  int32_t prot, flags;
  int32_t file;  // a copy of a file's bytes (not anonymous, not /dev/zero)
  int32_t rank;  // that mapped it
};

size_t round_up(size_t n) { return n / kPage * kPage + (n % kPage ? kPage : 0); }

void *fail(int err) {
  errno = err;
  return MAP_FAILED;
}

int fail_int(int err) {
  errno = err;
  return -1;
}

char *data_of(MapHeader *h) { return (char *)h + kPage; }
char *begin_of(MapHeader *h) { return data_of(h) + h->start; }
char *end_of(MapHeader *h) { return data_of(h) + h->length; }
bool shared(const MapHeader *h) { return (h->flags & MAP_TYPE) != MAP_PRIVATE; }

// The header of the mapping whose allocation holds `addr`, or null.
MapHeader *find_mapping(const void *addr) {
  agora::Runtime *rt = agora::api_runtime();
  if (!rt) return nullptr;
  const agora::AddressSpace &space = rt->space();
  if (!space.contains((uintptr_t)addr)) return nullptr;
  agora::CollectiveRun run;
  agora::PageId page = space.page_of((uintptr_t)addr);
  if (!space.in_placed_region(page) || !space.placed_find(page, &run)) return nullptr;
  auto *h = (MapHeader *)space.addr_of(run.first);
  if (h->magic != kMagic || h->self != (uint64_t)(uintptr_t)h) return nullptr;
  uintptr_t data = (uintptr_t)data_of(h);
  if ((uintptr_t)addr < data || (uintptr_t)addr >= data + h->capacity) return nullptr;
  return h;
}

// Global memory for a mapping of `length` bytes (whole pages), zero-filled,
// or null with errno set and a message.
// Whether a mapping of `length` bytes can fit at all; if not, a message and ENOMEM.
bool fits(const char *call, size_t length) {
  const agora::AddressSpace &space = agora::api_runtime()->space();
  uint64_t region = space.placed_capacity_pages() * space.page_size();
  if (length <= region - kPage) return true;
  log_error(
      "%s(%zu bytes): larger than the region of global memory the program's mappings come "
      "from (%llu bytes, a quarter of AGORA_MEMORY=%llu); %s",
      call, length, (unsigned long long)region, (unsigned long long)space.size(),
      agora::api_runtime()->raise_memory_hint().c_str());
  errno = ENOMEM;
  return false;
}

MapHeader *allocate(const char *call, size_t length) {
  agora::Runtime *rt = agora::api_runtime();
  const agora::AddressSpace &space = rt->space();
  if (!fits(call, length)) return nullptr;
  agora_placement_t placement = AGORA_PLACE_RANK;
  int rank = agora_rank();
  if (rt->config().heap == agora::HeapPlacement::Block)
    placement = AGORA_PLACE_BLOCK;
  else if (rt->config().heap == agora::HeapPlacement::Cyclic || space.servers() > 0)
    placement = AGORA_PLACE_CYCLIC;
  if (placement != AGORA_PLACE_RANK) rank = 0;
  void *block = nullptr;
  if (agora_mem_malloc_placed(length + kPage, placement, rank, &block) != AGORA_OK || !block) {
    log_error("%s(%zu bytes): no room in global memory (see above); %s", call, length, rt->raise_memory_hint().c_str());
    errno = ENOMEM;
    return nullptr;
  }
  auto *h = (MapHeader *)block;  // fresh placed pages read zero
  h->self = (uint64_t)(uintptr_t)h;
  h->start = 0;
  h->length = length;
  h->capacity = length;
  h->rank = agora_rank();
  return h;
}

void release(MapHeader *h) {
  h->magic = 0;
  agora_mem_free(h);
}

// The file's bytes [offset, offset + n) into global memory, through a
// private buffer (the fault path fills the pages as the copy touches them).
bool fill_from_file(int fd, off_t offset, char *to, size_t n) {
  constexpr size_t kChunk = 1 << 20;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  size_t done = 0;
  while (done < n) {
    size_t want = n - done < kChunk ? n - done : kChunk;
    ssize_t got = __wrap_pread(fd, buf.get(), want, offset + (off_t)done);  // on the descriptor's owner
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int err = errno;
      log_error("mmap: reading descriptor %d at offset %lld: %s", fd, (long long)(offset + (off_t)done), strerror(err));
      errno = err;
      return false;
    }
    if (got == 0) break;  // end of file: the rest stays zero
    std::memcpy(to + done, buf.get(), (size_t)got);
    done += (size_t)got;
  }
  return true;
}

// The flags global memory cannot honour: a message and the errno, or 0.
int refused_flags(void *addr, size_t length, int prot, int flags) {
  if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
    log_error(
        "mmap(%p, %zu, ..., MAP_FIXED%s): a fixed address is not supported in program mode: the "
        "program's mappings are global memory, placed by Agora",
        addr, length, (flags & MAP_FIXED_NOREPLACE) ? "_NOREPLACE" : "");
    return EINVAL;
  }
  if (flags & (MAP_STACK | MAP_GROWSDOWN)) {
    log_error(
        "mmap(%zu bytes, %s): memory for a stack is not supported in program mode: threads run "
        "on stacks Agora provides (AGORA_STACK)",
        length, (flags & MAP_STACK) ? "MAP_STACK" : "MAP_GROWSDOWN");
    return EINVAL;
  }
  if (flags & MAP_32BIT) {
    log_error("mmap(%zu bytes, MAP_32BIT): global memory lies above 4 GiB", length);
    return EINVAL;
  }
  if (prot & PROT_EXEC) {
    log_error("mmap(%zu bytes, PROT_EXEC): global memory is not executable in program mode", length);
    return EACCES;
  }
  return 0;
}

void *map(void *addr, size_t length, int prot, int flags, int fd, off64_t offset) {
  int type = flags & MAP_TYPE;
  if (type != MAP_PRIVATE && type != MAP_SHARED && type != MAP_SHARED_VALIDATE) return fail(EINVAL);
  if (length == 0) return fail(EINVAL);
  if (int err = refused_flags(addr, length, prot, flags)) return fail(err);
  if (!fits("mmap", length)) return MAP_FAILED;  // before round_up, which could wrap
  size_t pages = round_up(length);

  bool anonymous = (flags & MAP_ANONYMOUS) != 0;
  struct stat st {};
  if (!anonymous) {
    if (offset < 0 || offset % (off64_t)kPage != 0) return fail(EINVAL);
    // The descriptor may be another rank's (program_descriptors.cpp).
    if (__wrap_fstat(fd, &st) != 0) return fail(EBADF);
    int mode = agora::program_fd_status_flags(fd);
    if (mode < 0) return fail(EBADF);
    // The kernel's checks: a mapping reads the file; a shared writable one writes it.
    bool shared_write = type != MAP_PRIVATE && (prot & PROT_WRITE);
    if ((mode & O_ACCMODE) == O_WRONLY || (shared_write && (mode & O_ACCMODE) != O_RDWR)) return fail(EACCES);
    if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 5) {
      anonymous = true;  // /dev/zero
    } else if (!S_ISREG(st.st_mode)) {
      log_error(
          "mmap(%zu bytes, descriptor %d): only regular files (and /dev/zero) can be mapped in "
          "program mode",
          length, fd);
      return fail(ENODEV);
    } else if (shared_write) {
      log_error(
          "mmap(%zu bytes, PROT_WRITE, MAP_SHARED, descriptor %d): a writable shared file "
          "mapping is not supported in program mode (the mapping is global memory, a copy of the "
          "file: stores would not reach the file); map it MAP_PRIVATE and write() the result",
          length, fd);
      return fail(ENODEV);
    }
  }
  MapHeader *h = allocate("mmap", pages);
  if (!h) return MAP_FAILED;
  if (!anonymous) {
    size_t in_file = st.st_size <= offset ? 0 : (size_t)(st.st_size - offset);
    if (!fill_from_file(fd, (off_t)offset, data_of(h), in_file < length ? in_file : length)) {
      int err = errno;
      release(h);
      return fail(err);
    }
  }
  h->prot = prot;
  h->flags = flags;
  h->file = !anonymous;
  h->magic = kMagic;
  return data_of(h);
}

// The mapping holding [addr, addr + length), or null with a message.
MapHeader *mapping_of(const char *call, void *addr, size_t length) {
  MapHeader *h = find_mapping(addr);
  if (!h || (char *)addr < begin_of(h) || length > (size_t)(end_of(h) - (char *)addr)) {
    log_error(
        "%s(%p, %zu): not inside memory the program mapped with mmap (global memory from malloc, "
        "a global or a stack?); refused",
        call, addr, length);
    return nullptr;
  }
  return h;
}

// A whole mapping, or its head or its tail (the aligned-allocation idiom:
// map more, unmap the ends). A head stays allocated until the rest goes.
int unmap(void *addr, size_t length) {
  if ((uintptr_t)addr % kPage != 0 || length == 0) return fail_int(EINVAL);
  length = round_up(length);
  MapHeader *h = mapping_of("munmap", addr, length);
  if (!h) return fail_int(EINVAL);
  char *from = (char *)addr, *to = from + length;
  if (from == begin_of(h) && to == end_of(h)) {
    release(h);
  } else if (from == begin_of(h)) {
    h->start += length;
  } else if (to == end_of(h)) {
    std::memset(from, 0, length);  // grown back by mremap, it reads zeros
    h->length -= length;
  } else {
    log_error(
        "munmap(%p, %zu): the middle of a mapping cannot be unmapped in program mode (only a "
        "whole mapping, its head or its tail); the mapping is %p..%p",
        addr, length, (void *)begin_of(h), (void *)end_of(h));
    return fail_int(EINVAL);
  }
  return 0;
}

void *remap(void *old, size_t old_size, size_t new_size, int flags) {
  if ((uintptr_t)old % kPage != 0 || new_size == 0) return fail(EINVAL);
  if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
    log_error("mremap(%p, %zu, %zu): MREMAP_FIXED and MREMAP_DONTUNMAP are not supported in program mode", old,
              old_size, new_size);
    return fail(EINVAL);
  }
  MapHeader *h = find_mapping(old);
  if (!h || old != begin_of(h) || round_up(old_size) != (size_t)(end_of(h) - begin_of(h))) {
    log_error("mremap(%p, %zu, %zu): only a whole mapping the program made with mmap can be remapped", old, old_size,
              new_size);
    return fail(EINVAL);
  }
  if (!fits("mremap", new_size)) return MAP_FAILED;
  size_t size = round_up(new_size), end = h->start + size;
  if (end <= h->length) {  // shrink in place; the tail reads zeros if it grows back
    std::memset(data_of(h) + end, 0, h->length - end);
    h->length = end;
    return old;
  }
  if (h->file) {
    log_error("mremap(%p, %zu, %zu): a file mapping cannot grow in program mode; map the file again", old, old_size,
              new_size);
    return fail(EINVAL);
  }
  if (end <= h->capacity) {
    h->length = end;  // zeroed when it shrank
    return old;
  }
  if (!(flags & MREMAP_MAYMOVE)) return fail(ENOMEM);  // cannot grow in place, as the kernel says
  MapHeader *n = allocate("mremap", size);
  if (!n) return MAP_FAILED;
  std::memcpy(data_of(n), begin_of(h), h->length - h->start);
  n->prot = h->prot;
  n->flags = h->flags;
  n->magic = kMagic;
  release(h);
  return data_of(n);
}

// Nothing to write: a mapping is anonymous memory or a private copy.
int sync_mapping(void *addr, int flags) {
  if ((uintptr_t)addr % kPage != 0 || (flags & ~(MS_ASYNC | MS_SYNC | MS_INVALIDATE)) ||
      ((flags & MS_ASYNC) && (flags & MS_SYNC)))
    return fail_int(EINVAL);
  return 0;
}

std::atomic<bool> g_mprotect_noted{false};

int protect(void *addr, size_t length, int prot) {
  if ((uintptr_t)addr % kPage != 0) return fail_int(EINVAL);
  if (prot & PROT_EXEC) {
    log_error("mprotect(%p, %zu, PROT_EXEC): global memory is not executable in program mode", addr, length);
    return fail_int(EACCES);
  }
  MapHeader *h = find_mapping(addr);
  if (h && h->file && shared(h) && (prot & PROT_WRITE)) {
    log_error(
        "mprotect(%p, %zu, PROT_WRITE): a shared file mapping cannot be made writable in program "
        "mode (it is a copy of the file: stores would not reach the file)",
        addr, length);
    return fail_int(EACCES);
  }
  // The protocol owns the protection of global pages: the program's is
  // accepted and not enforced (a correct program does not notice).
  if (!g_mprotect_noted.exchange(true))
    log_error(
        "note: mprotect(%p, %zu, %d) on global memory is accepted but not enforced in program "
        "mode (the consistency protocol owns the pages' protection); noted once",
        addr, length, prot);
  return 0;
}

// Advice that only discards contents is done by hand (the kernel's would
// drop the protocol's copy of the pages); the rest are hints, ignored.
int advise(void *addr, size_t length, int advice) {
  if ((uintptr_t)addr % kPage != 0) return fail_int(EINVAL);
  if (length == 0) return 0;
  length = round_up(length);
  switch (advice) {
    case MADV_DONTNEED:
    case MADV_REMOVE: {
      const char *name = advice == MADV_DONTNEED ? "MADV_DONTNEED" : "MADV_REMOVE";
      MapHeader *h = mapping_of("madvise", addr, length);
      if (!h) return fail_int(EINVAL);
      if (h->file) {
        log_error(
            "madvise(%p, %zu, %s): discarding a file mapping's pages is not supported in program "
            "mode (they would read the file again)",
            addr, length, name);
        return fail_int(EINVAL);
      }
      // Private anonymous memory reads zeros afterwards; shared memory keeps
      // its bytes under MADV_DONTNEED and loses them under MADV_REMOVE.
      if (advice == MADV_REMOVE && !shared(h)) return fail_int(EINVAL);
      if (advice == MADV_REMOVE || !shared(h)) std::memset(addr, 0, length);
      return 0;
    }
    case MADV_HWPOISON:  // and MADV_SOFT_OFFLINE (101): testing the hardware's failures
      return fail_int(EPERM);
    default:
      // Hints (MADV_NORMAL, _SEQUENTIAL, _WILLNEED, _HUGEPAGE, _FREE, ...).
      if (advice < 0 || advice > MADV_HWPOISON + 1) return fail_int(EINVAL);
      return advice == MADV_HWPOISON + 1 ? fail_int(EPERM) : 0;
  }
}

bool global(const void *p) { return agora::shim_runtime_live() && agora_is_global(p); }

// After the job has ended what was global memory is left to the process's
// exit: the kernel must not punch holes in Agora's reservation.
bool former_global(const void *p) { return agora::program_finished() && agora_program_heap_owns(p); }
}  // namespace

extern "C" {

void *__wrap_mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (!agora::shim_runtime_live()) return __real_mmap(addr, length, prot, flags, fd, offset);
  return map(addr, length, prot, flags, fd, offset);
}

void *__wrap_mmap64(void *addr, size_t length, int prot, int flags, int fd, off64_t offset) {
  if (!agora::shim_runtime_live()) return __real_mmap64(addr, length, prot, flags, fd, offset);
  return map(addr, length, prot, flags, fd, offset);
}

int __wrap_munmap(void *addr, size_t length) {
  if (global(addr)) return unmap(addr, length);
  if (former_global(addr)) return 0;
  return __real_munmap(addr, length);
}

void *__wrap_mremap(void *old, size_t old_size, size_t new_size, int flags, ...) {
  if (global(old)) return remap(old, old_size, new_size, flags);
  if (former_global(old)) {
    log_error("mremap(%p, %zu, %zu): the job has ended; its global memory can no longer be remapped", old, old_size,
              new_size);
    return fail(EINVAL);
  }
  void *new_address = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    new_address = va_arg(ap, void *);
    va_end(ap);
  }
  return __real_mremap(old, old_size, new_size, flags, new_address);
}

int __wrap_msync(void *addr, size_t length, int flags) {
  if (global(addr) || former_global(addr)) return sync_mapping(addr, flags);
  return __real_msync(addr, length, flags);
}

int __wrap_mprotect(void *addr, size_t length, int prot) {
  if (global(addr)) return protect(addr, length, prot);
  if (former_global(addr)) return 0;
  return __real_mprotect(addr, length, prot);
}

int __wrap_madvise(void *addr, size_t length, int advice) {
  if (global(addr)) return advise(addr, length, advice);
  if (former_global(addr)) return 0;
  return __real_madvise(addr, length, advice);
}

}  // extern "C"
