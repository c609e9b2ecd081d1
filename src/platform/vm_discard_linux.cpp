// Freed global memory: punching a hole in the memory file zeroes the pages
// in both views at once and releases their memory (a later touch maps a
// fresh zero page), as agora_alloc's never-used pages are.
#include <fcntl.h>
#include <sys/mman.h>

#include "platform/platform.h"

namespace agora::platform {

bool vm_discard(const GlobalRange &range, size_t offset, size_t len) {
  if (offset > range.size || len > range.size - offset) return false;
  return fallocate(range.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)len) == 0;
}

bool vm_populate(void *addr, size_t len, bool write) {
#if defined(MADV_POPULATE_READ) && defined(MADV_POPULATE_WRITE)
  return madvise(addr, len, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0;
#else
  (void)addr, (void)len, (void)write;
  return false;
#endif
}

}  // namespace agora::platform
