// Program mode's OS pieces: the memory object grown for the executable's
// shared windows, the windows mapped over .data/.bss, and the alternate
// signal stack of threads that run on stacks in global memory.
#include <sys/mman.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "common/log.h"
#include "platform/platform.h"

namespace agora::platform {

bool vm_grow(GlobalRange *range, size_t bytes, std::string *error) {
  size_t old_total = range->size + range->extra, new_total = old_total + bytes;
  if (new_total < old_total) {
    *error = "the memory object's size overflows";
    return false;
  }
  if (ftruncate(range->fd, (off_t)new_total) != 0) {
    *error = std::string("cannot grow the global memory file: ") + system_error_text(errno);
    return false;
  }
  void *svc = mremap(range->service_view, old_total, new_total, MREMAP_MAYMOVE);
  if (svc == MAP_FAILED) {
    *error = std::string("cannot grow the service view: ") + system_error_text(errno);
    return false;
  }
  range->service_view = (std::byte *)svc;
  range->extra += bytes;
  return true;
}

bool vm_map_window(const GlobalRange &range, uintptr_t addr, size_t len, uint64_t offset, std::string *error) {
  void *p = mmap((void *)addr, len, PROT_NONE, MAP_SHARED | MAP_FIXED, range.fd, (off_t)offset);
  if (p == MAP_FAILED) {
    *error = std::string("cannot map global memory over ") + std::to_string(len) +
             " bytes of the program's data: " + system_error_text(errno);
    return false;
  }
  fork_copy_window(addr, len);
  return true;
}

namespace {
thread_local void *tl_alt_stack = nullptr;
thread_local size_t tl_alt_bytes = 0;
}  // namespace

bool alt_signal_stack_install(size_t bytes, std::string *error) {
  if (tl_alt_stack) return true;
  void *mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (mem == MAP_FAILED) {
    *error = std::string("cannot allocate a signal stack: ") + system_error_text(errno);
    return false;
  }
  stack_t ss;
  std::memset(&ss, 0, sizeof ss);
  ss.ss_sp = mem;
  ss.ss_size = bytes;
  if (sigaltstack(&ss, nullptr) != 0) {
    *error = std::string("sigaltstack failed: ") + system_error_text(errno);
    munmap(mem, bytes);
    return false;
  }
  tl_alt_stack = mem;
  tl_alt_bytes = bytes;
  return true;
}

void alt_signal_stack_remove() {
  if (!tl_alt_stack) return;
  stack_t ss;
  std::memset(&ss, 0, sizeof ss);
  ss.ss_flags = SS_DISABLE;
  sigaltstack(&ss, nullptr);
  munmap(tl_alt_stack, tl_alt_bytes);
  tl_alt_stack = nullptr;
}

}  // namespace agora::platform
