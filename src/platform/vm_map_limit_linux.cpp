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

uint64_t vm_map_count() {
  std::FILE *f = std::fopen("/proc/self/maps", "r");
  if (!f) return 0;
  uint64_t lines = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) lines += c == '\n';
  std::fclose(f);
  return lines;
}

}  // namespace agora::platform
