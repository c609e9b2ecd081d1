// Zeroed memory that costs nothing until touched (MAP_NORESERVE): the
// one-sided metadata, one byte per page of the global range. Shared, so that
// it does not count against ulimit -d (RLIMIT_DATA counts private writable
// mappings, touched or not): a 16 TiB range has 4 GiB of flags.
#include <sys/mman.h>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "platform/platform.h"

namespace agora::platform {

std::byte *lazy_zero_alloc(size_t bytes, std::string *error) {
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    *error = "cannot map " + human_bytes(bytes) + " of metadata: " + system_error_text(errno);
    return nullptr;
  }
  return (std::byte *)p;
}

void lazy_zero_free(std::byte *p, size_t bytes) {
  if (p) munmap(p, bytes);
}

}  // namespace agora::platform
