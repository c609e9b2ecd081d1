// The kernel's limit on a process's memory mappings: each stretch of the
// application view with its own protection is one, so it bounds how many
// separately protected pages a rank can hold (docs/cache.md).
#include <cstdio>

#include "platform/platform.h"

namespace agora::platform {

uint64_t vm_map_limit() {
  std::FILE *f = std::fopen("/proc/sys/vm/max_map_count", "r");
  if (!f) return 0;
  unsigned long long limit = 0;
  if (std::fscanf(f, "%llu", &limit) != 1) limit = 0;
  std::fclose(f);
  return limit;
}

}  // namespace agora::platform
