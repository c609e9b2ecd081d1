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
#include <climits>
#include <linux/futex.h>
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

namespace {
FaultCallback g_callback = nullptr;
uintptr_t g_lo = 0, g_hi = 0;
struct sigaction g_previous;
bool g_installed = false;

void chain_to_previous(int sig, siginfo_t *info, void *context) {
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) {
      g_previous.sa_sigaction(sig, info, context);
      return;
    }
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  // Default action: restore it and return; the faulting instruction runs
  // again and the kernel kills the process with SIGSEGV, as without Agora.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGSEGV, &dfl, nullptr);
}

void on_sigsegv(int sig, siginfo_t *info, void *context) {
  int saved_errno = errno;
  uintptr_t addr = (uintptr_t)info->si_addr;
  if (g_callback && addr >= g_lo && addr < g_hi) {
    auto *uc = (ucontext_t *)context;
    bool is_write = (uc->uc_mcontext.gregs[REG_ERR] & 0x2) != 0;  // x86-64 page-fault error code
    if (g_callback((void *)addr, is_write)) {
      errno = saved_errno;
      return;
    }
  }
  chain_to_previous(sig, info, context);
  errno = saved_errno;
}
}  // namespace

bool fault_handler_install(FaultCallback callback, uintptr_t lo, uintptr_t hi) {
  g_callback = callback;
  g_lo = lo;
  g_hi = hi;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsegv;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &g_previous) != 0) return false;
  g_installed = true;
  return true;
}

void fault_handler_uninstall() {
  if (!g_installed) return;
  sigaction(SIGSEGV, &g_previous, nullptr);
  g_installed = false;
  g_callback = nullptr;
}

void fault_signal_unblock() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSEGV);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

// SIGURG, thread-directed: it stays pending for the one thread that blocks it.
static sigset_t doorbell_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGURG);
  return set;
}

void doorbell_block() {
  sigset_t set = doorbell_signal();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool doorbell_wait(uint32_t us) {
  sigset_t set = doorbell_signal();
  timespec ts{(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  return sigtimedwait(&set, nullptr, &ts) == SIGURG;
}

void doorbell_ring(int pid, int tid) { syscall(SYS_tgkill, pid, tid, SIGURG); }

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex word must be a plain 32-bit word");

void futex_wait(std::atomic<uint32_t> *word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t> *word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

bool cpu_affinity(std::vector<uint64_t> *mask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  mask->assign((CPU_SETSIZE + 63) / 64, 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) (*mask)[cpu / 64] |= 1ull << (cpu % 64);
  return true;
}

int process_id() { return getpid(); }
int thread_id() { return (int)syscall(SYS_gettid); }

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

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
