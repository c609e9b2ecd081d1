// How large a global range this process can map, and what bounds it: the
// free address space above the application view's fixed base, the largest
// other free gap (for the service view, placed by the kernel), ulimit -v
// and ulimit -f. Read from /proc/self/maps and getrlimit at start, so that a
// range that cannot fit fails with the limit named instead of an errno.
#include <sys/resource.h>
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "platform/platform.h"

namespace agora::platform {

namespace {
// The kernel hands out addresses below 2^47 - 1 page unless asked for more.
constexpr uintptr_t kUserTop = 0x7ffffffff000ull;

uint64_t rlimit_bytes(int resource) {
  rlimit rl{};
  if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return (uint64_t)rl.rlim_cur;
}

uintptr_t mmap_min_addr() {
  std::ifstream in("/proc/sys/vm/mmap_min_addr");
  uintptr_t v = 65536;
  in >> v;
  return v;
}

struct Mapping {
  uintptr_t lo, hi;
  std::string name;
};

std::vector<Mapping> read_maps() {
  std::vector<Mapping> maps;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    Mapping m{};
    char name[512] = "";
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %*s %511[^\n]", &m.lo, &m.hi, name) < 2)
      continue;
    if (m.lo >= kUserTop) continue;  // [vsyscall]
    m.name = name[0] ? name : "an anonymous mapping";
    maps.push_back(m);
  }
  return maps;
}
}  // namespace

bool vm_room(uintptr_t base, VmRoom *out) {
  std::vector<Mapping> maps = read_maps();
  if (maps.empty()) return false;
  VmRoom r;
  r.as_limit = rlimit_bytes(RLIMIT_AS);
  r.file_limit = rlimit_bytes(RLIMIT_FSIZE);
  uintptr_t prev_end = mmap_min_addr();
  r.app_limit = kUserTop;
  r.app_limit_name = "the top of the user address space";
  auto gap = [&](uintptr_t lo, uintptr_t hi, const std::string &above) {
    if (hi <= lo) return;
    if (lo <= base && base < hi) {
      r.app_free = hi - base;
      r.app_limit = hi;
      r.app_limit_name = above;
      // What lies after the application view is counted with it (below);
      // what lies before it is a gap like any other.
      hi = base;
      if (hi <= lo) return;
    }
    // The kernel's top-down search starts below the stack's guard gap.
    if (above == "[stack]") return;
    if (hi - lo > r.other_gap) {
      r.other_gap = hi - lo;
      r.other_lo = lo;
      r.other_hi = hi;
    }
  };
  bool base_mapped = false;
  for (const Mapping &m : maps) {
    r.mapped += m.hi - m.lo;
    if (m.lo <= base && base < m.hi) {
      base_mapped = true;
      r.app_limit = m.lo;
      r.app_limit_name = m.name;
    }
    gap(prev_end, m.lo, m.name);
    prev_end = std::max(prev_end, m.hi);
  }
  gap(prev_end, kUserTop, "the top of the user address space");
  if (base_mapped) r.app_free = 0;

  // Both views are mapped: the service view either fits in another gap or
  // after the application view in the same one.
  uint64_t by_space = std::min(r.app_free, std::max(r.other_gap, r.app_free / 2));
  uint64_t by_as = r.as_limit == UINT64_MAX ? UINT64_MAX : r.as_limit > r.mapped ? (r.as_limit - r.mapped) / 2 : 0;
  r.largest = std::min({by_space, by_as, r.file_limit});
  *out = r;
  return true;
}

std::string vm_room_shortfall(uintptr_t base, uint64_t size, const VmRoom &r) {
  char msg[1024];
  std::string most = "; at most " + human_bytes(r.largest) + " fits in this process";
  if (size > r.file_limit) {
    std::snprintf(msg, sizeof msg,
                  "the global range is one %s memory file and ulimit -f (file size) allows %s; "
                  "raise it (ulimit -f unlimited)",
                  human_bytes(size).c_str(), human_bytes(r.file_limit).c_str());
    return msg + most;
  }
  if (r.as_limit != UINT64_MAX && (r.mapped > r.as_limit || 2 * size > r.as_limit - r.mapped)) {
    std::snprintf(msg, sizeof msg,
                  "the range is mapped twice (application and service views), which needs 2 x %s "
                  "of virtual address space, but ulimit -v allows %s and %s is mapped already; "
                  "raise ulimit -v (or unlimited)",
                  human_bytes(size).c_str(), human_bytes(r.as_limit).c_str(), human_bytes(r.mapped).c_str());
    return msg + most;
  }
  if (size > r.app_free) {
    std::snprintf(msg, sizeof msg,
                  "the application view needs %p..%p, but the address space is free only from %p "
                  "to %p (%s is mapped there)",
                  (void *)base, (void *)(base + size), (void *)base, (void *)r.app_limit, r.app_limit_name.c_str());
    return msg + most;
  }
  if (size > std::max(r.other_gap, r.app_free - size)) {
    std::snprintf(msg, sizeof msg,
                  "the service view needs another %s of free address space, but the largest free "
                  "gap is %s (%p..%p) and %s remain after the application view",
                  human_bytes(size).c_str(), human_bytes(r.other_gap).c_str(), (void *)r.other_lo, (void *)r.other_hi,
                  human_bytes(r.app_free - size).c_str());
    return msg + most;
  }
  return "";
}

}  // namespace agora::platform
