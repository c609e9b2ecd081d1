// The SIGSEGV handler: faults inside the global range go to the runtime's
// callback; every other SIGSEGV goes to the program's own action (the one
// installed before Agora, e.g. Open MPI's, or one the program installed
// later through the interposed sigaction/signal), else the default action.
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <ucontext.h>

#include "platform/platform.h"
#include "platform/signal_chain.h"

namespace agora::platform {

namespace chain {
namespace {
// Two slots and an index: the handler reads a complete action while the
// program installs another (writers are serialised by g_write).
struct sigaction g_slots[2];
std::atomic<int> g_current{0};
std::mutex g_write;
std::atomic<bool> g_active{false};
}  // namespace

bool active() { return g_active.load(std::memory_order_acquire); }

struct sigaction program_action() { return g_slots[g_current.load(std::memory_order_acquire)]; }

void set_program_action(const struct sigaction &act) {
  std::lock_guard<std::mutex> g(g_write);
  int next = 1 - g_current.load(std::memory_order_relaxed);
  g_slots[next] = act;
  g_current.store(next, std::memory_order_release);
}

// Installed under g_write by fault_handler_install, before activation.
void begin(const struct sigaction &previous) {
  set_program_action(previous);
  g_active.store(true, std::memory_order_release);
}
}  // namespace chain

namespace {
FaultCallback g_callback = nullptr;
uintptr_t g_lo = 0, g_hi = 0;

void set_kernel_default() {
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  chain::real_sigaction(SIGSEGV, &dfl, nullptr);
}

// A SIGSEGV that is not Agora's, handled as the program's action says.
void chain_to_program(int sig, siginfo_t *info, void *context) {
  struct sigaction act = chain::program_action();
  bool fault = info->si_code > 0;  // raised by the kernel for an access, not sent
  bool has_sigaction = (act.sa_flags & SA_SIGINFO) && act.sa_sigaction;
  bool has_handler = !(act.sa_flags & SA_SIGINFO) && act.sa_handler != SIG_DFL &&
                     act.sa_handler != SIG_IGN;
  if (!has_sigaction && !has_handler) {
    if (act.sa_handler == SIG_IGN && !fault) return;  // a sent SIGSEGV the program ignores
    // Default action (an ignored fault also kills: the kernel does so
    // without Agora). A fault is raised again when the instruction is
    // retried; a sent signal is raised again here, pending until we return.
    set_kernel_default();
    if (!fault) raise(SIGSEGV);
    return;
  }
  if (act.sa_flags & SA_RESETHAND) {
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    chain::set_program_action(dfl);
  }
  // The program's sa_mask applies while its handler runs, as the kernel
  // would apply it.
  sigset_t saved;
  pthread_sigmask(SIG_BLOCK, &act.sa_mask, &saved);
  if (has_sigaction) act.sa_sigaction(sig, info, context);
  else act.sa_handler(sig);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

void on_sigsegv(int sig, siginfo_t *info, void *context) {
  int saved_errno = errno;
  uintptr_t addr = (uintptr_t)info->si_addr;
  if (g_callback && info->si_code > 0 && addr >= g_lo && addr < g_hi) {
    auto *uc = (ucontext_t *)context;
    bool is_write = (uc->uc_mcontext.gregs[REG_ERR] & 0x2) != 0;  // x86-64 page-fault error code
    if (g_callback((void *)addr, is_write)) {
      errno = saved_errno;
      return;
    }
  }
  chain_to_program(sig, info, context);
  errno = saved_errno;
}
}  // namespace

bool fault_handler_install(FaultCallback callback, uintptr_t lo, uintptr_t hi) {
  g_callback = callback;
  g_lo = lo;
  g_hi = hi;
  struct sigaction sa, previous;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsegv;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (chain::real_sigaction(SIGSEGV, &sa, &previous) != 0) return false;
  chain::begin(previous);
  return true;
}

void fault_handler_uninstall() {
  if (!chain::active()) return;
  // The program's latest action becomes the kernel's again.
  std::lock_guard<std::mutex> g(chain::g_write);
  struct sigaction act = chain::program_action();
  chain::g_active.store(false, std::memory_order_release);
  chain::real_sigaction(SIGSEGV, &act, nullptr);
  g_callback = nullptr;
}

void fault_signal_unblock() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSEGV);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace agora::platform
