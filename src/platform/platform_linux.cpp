#include "platform/platform.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <dlfcn.h>
#include <link.h>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

namespace agora::platform {

bool vm_reserve(uintptr_t base, size_t size, GlobalRange *out, std::string *error) {
  int fd = memfd_create("agora-global", MFD_CLOEXEC);
  if (fd < 0) {
    *error = std::string("memfd_create failed: ") + std::strerror(errno);
    return false;
  }
  if (ftruncate(fd, (off_t)size) != 0) {
    *error = std::string("cannot size the global memory object: ") + std::strerror(errno);
    close(fd);
    return false;
  }
  void *app = mmap((void *)base, size, PROT_NONE, MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE,
                   fd, 0);
  if (app == MAP_FAILED || app != (void *)base) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "cannot reserve the global range at %p (+%zu bytes): %s",
                  (void *)base, size, app == MAP_FAILED ? std::strerror(errno) : "address in use");
    *error = msg;
    if (app != MAP_FAILED) munmap(app, size);
    close(fd);
    return false;
  }
  void *svc = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (svc == MAP_FAILED) {
    *error = std::string("cannot map the service view: ") + std::strerror(errno);
    munmap(app, size);
    close(fd);
    return false;
  }
  out->app_view = (std::byte *)app;
  out->service_view = (std::byte *)svc;
  out->size = size;
  out->fd = fd;
  return true;
}

void vm_release(GlobalRange *range) {
  if (!range->app_view) return;
  munmap(range->app_view, range->size);
  munmap(range->service_view, range->size);
  close(range->fd);
  *range = GlobalRange{};
}

bool vm_protect(void *addr, size_t len, Access access) {
  int prot = access == Access::None ? PROT_NONE
             : access == Access::Read ? PROT_READ
                                      : PROT_READ | PROT_WRITE;
  return mprotect(addr, len, prot) == 0;
}

int process_id() { return getpid(); }
int thread_id() { return (int)syscall(SYS_gettid); }


namespace {
// One walk over the loaded modules (the executable comes first, named "").
struct ModuleQuery {
  // In: find the module holding `addr`, or (by_name) the one named `name`.
  bool by_name = false;
  uintptr_t addr = 0;
  const std::string *name = nullptr;
  // Out.
  bool found = false;
  bool executable = false;  // addr lies in an executable segment
  uintptr_t bias = 0;       // dlpi_addr: load address minus link address
  std::string module;
  bool first = true;
};

bool in_executable_segment(const dl_phdr_info *info, uintptr_t addr, bool *in_any) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (addr >= lo && addr < lo + ph.p_memsz) {
      *in_any = true;
      return (ph.p_flags & PF_X) != 0;
    }
  }
  return false;
}

int visit_module(dl_phdr_info *info, size_t, void *data) {
  auto *q = (ModuleQuery *)data;
  std::string name = q->first ? std::string() : std::string(info->dlpi_name ? info->dlpi_name : "");
  q->first = false;
  if (q->by_name) {
    if (name != *q->name) return 0;
    q->addr += info->dlpi_addr;  // offset -> address
  }
  bool in_any = false;
  bool exec = in_executable_segment(info, q->addr, &in_any);
  if (!in_any && !q->by_name) return 0;
  q->found = true;
  q->executable = exec;
  q->bias = info->dlpi_addr;
  q->module = name;
  return 1;
}

std::string module_label(const std::string &module) {
  return module.empty() ? std::string("the executable") : module;
}
}  // namespace

bool code_ref_from_address(const void *fn, std::string *module, uint64_t *offset,
                           std::string *error) {
  Dl_info di{};
  if (!fn || !dladdr(fn, &di)) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "%p is not in the executable or any loaded library", fn);
    *error = msg;
    return false;
  }
  ModuleQuery q;
  q.addr = (uintptr_t)fn;
  dl_iterate_phdr(visit_module, &q);
  if (!q.found || !q.executable) {
    char msg[512];
    std::snprintf(msg, sizeof msg, "%p is not code (it lies in a data segment of %s)", fn,
                  q.found ? module_label(q.module).c_str() : di.dli_fname);
    *error = msg;
    return false;
  }
  *module = q.module;
  *offset = (uintptr_t)fn - q.bias;
  return true;
}

void *code_ref_to_address(const std::string &module, uint64_t offset, std::string *error) {
  ModuleQuery q;
  q.by_name = true;
  q.name = &module;
  q.addr = offset;
  dl_iterate_phdr(visit_module, &q);
  if (!q.found || !q.executable) {
    char msg[512];
    std::snprintf(msg, sizeof msg, "%s (offset 0x%llx): %s", module_label(module).c_str(),
                  (unsigned long long)offset,
                  q.found ? "not code here (do all ranks run the same program?)"
                          : "not loaded in this process (load the library on every rank)");
    *error = msg;
    return nullptr;
  }
  return (void *)q.addr;
}

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void sleep_us(uint32_t us) {
  timespec ts{(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void thread_yield() { sched_yield(); }

void thread_reduce_timer_slack() { prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); }

}  // namespace agora::platform
