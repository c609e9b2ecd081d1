// The SIGSEGV handler: faults inside the global range go to the runtime's
// callback; every other SIGSEGV goes to the program's own action (the one
// installed before Agora, e.g. Open MPI's, or one the program installed
// later through the interposed sigaction/signal), else the default action.
#include <pthread.h>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "platform/platform.h"
#include "platform/range_list.h"
#include "platform/signal_chain.h"

namespace agora::platform {

namespace chain {
namespace {
// Two slots and an index: the handler reads a complete action while the
// program installs another. Writers take a spinlock with every signal
// blocked, so a handler that calls sigaction on the thread holding it (Open
// MPI's resets SIGSEGV) cannot deadlock: it can only run on another thread.
struct sigaction g_slots[2];
std::atomic<int> g_current{0};
std::atomic_flag g_write = ATOMIC_FLAG_INIT;
std::atomic<bool> g_active{false};

class WriteGuard {
 public:
  WriteGuard() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved_);
    while (g_write.test_and_set(std::memory_order_acquire)) cpu_relax();
  }
  ~WriteGuard() {
    g_write.clear(std::memory_order_release);
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }

 private:
  sigset_t saved_;
};

void store_locked(const struct sigaction &act) {
  int next = 1 - g_current.load(std::memory_order_relaxed);
  g_slots[next] = act;
  g_current.store(next, std::memory_order_release);
}
}  // namespace

bool active() { return g_active.load(std::memory_order_acquire); }

struct sigaction program_action() {
  return g_slots[g_current.load(std::memory_order_acquire)];
}

struct sigaction exchange_program_action(const struct sigaction *act) {
  WriteGuard g;
  struct sigaction previous = program_action();
  if (act) store_locked(*act);
  return previous;
}

void set_program_action(const struct sigaction &act) { exchange_program_action(&act); }

void begin(const struct sigaction &previous) {
  WriteGuard g;
  store_locked(previous);
  g_active.store(true, std::memory_order_release);
}

// The program's latest action becomes the kernel's again.
void end() {
  WriteGuard g;
  if (!g_active.load(std::memory_order_relaxed)) return;
  struct sigaction act = program_action();
  g_active.store(false, std::memory_order_release);
  real_sigaction(SIGSEGV, &act, nullptr);
}
}  // namespace chain

namespace {
FaultCallback g_callback = nullptr;
uintptr_t g_lo = 0, g_hi = 0;
RangeList g_windows;  // program mode's windows (fault_handler_add_range)
std::atomic<void (*)(void *)> g_hint{nullptr};

bool ours(uintptr_t addr) { return (addr >= g_lo && addr < g_hi) || g_windows.contains(addr); }

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
  bool has_handler = !(act.sa_flags & SA_SIGINFO) && act.sa_handler != SIG_DFL && act.sa_handler != SIG_IGN;
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
  if (has_sigaction)
    act.sa_sigaction(sig, info, context);
  else
    act.sa_handler(sig);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

void on_sigsegv(int sig, siginfo_t *info, void *context) {
  int saved_errno = errno;
  uintptr_t addr = (uintptr_t)info->si_addr;
  if (g_callback && info->si_code > 0 && ours(addr)) {
    if (g_callback((void *)addr, fault_is_write(context))) {
      errno = saved_errno;
      return;
    }
  }
  if (info->si_code > 0)
    if (void (*hint)(void *) = g_hint.load(std::memory_order_acquire)) hint((void *)addr);
  chain_to_program(sig, info, context);
  errno = saved_errno;
}
}  // namespace

bool fault_handler_add_range(uintptr_t lo, uintptr_t hi) { return g_windows.add(lo, hi); }

void fault_handler_set_hint(void (*hint)(void *addr)) { g_hint.store(hint, std::memory_order_release); }

bool fault_handler_install(FaultCallback callback, uintptr_t lo, uintptr_t hi) {
  g_callback = callback;
  g_lo = lo;
  g_hi = hi;
  struct sigaction sa, previous;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsegv;
  // SA_ONSTACK: threads on a stack in global memory have a private signal
  // stack, and the handler (which runs the runtime) must use it.
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (chain::real_sigaction(SIGSEGV, &sa, &previous) != 0) return false;
  chain::begin(previous);
  return true;
}

void fault_handler_uninstall() {
  chain::end();
  g_callback = nullptr;
  g_hint.store(nullptr);
  g_windows.clear();
}

void fault_signal_unblock() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSEGV);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace agora::platform
