#include "platform/platform.h"

#include <cerrno>
#include <csignal>
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

int process_id() { return getpid(); }
int thread_id() { return (int)syscall(SYS_gettid); }

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
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
