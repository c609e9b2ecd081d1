// The program's sigaction / signal / sysv_signal / bsd_signal, interposed
// (as ArgoDSM does) so that a SIGSEGV handler the program installs after
// agora_init does not replace Agora's: while Agora's handler is installed it
// becomes the next handler in the chain, and the program sees its own
// actions as if Agora were not there. Every other signal, and SIGSEGV when
// Agora's handler is not installed, goes straight to libc. sigprocmask and
// pthread_sigmask are interposed too, to keep SIGSEGV unblocked (below).
//
// libagora is a static library linked into the executable: these
// definitions take precedence over libc's for the program, and (exported
// with --export-dynamic-symbol, see src/CMakeLists.txt) for the shared
// libraries it loads. fault_handler.cpp calls real_sigaction, which keeps
// this object in every link that uses the fault handler.
#include <dlfcn.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "platform/signal_chain.h"

extern "C" int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);  // glibc

namespace agora::platform::chain {

int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) { return __sigaction(sig, act, old); }

}  // namespace agora::platform::chain

namespace {
using agora::platform::chain::active;
using agora::platform::chain::exchange_program_action;

using SignalFn = sighandler_t (*)(int, sighandler_t);

// libc's function `name` (the next definition after the executable's).
SignalFn next_signal_fn(std::atomic<SignalFn> &cache, const char *name) {
  SignalFn fn = cache.load(std::memory_order_acquire);
  if (!fn) {
    fn = (SignalFn)dlsym(RTLD_NEXT, name);
    cache.store(fn, std::memory_order_release);
  }
  return fn;
}

sighandler_t previous_handler(const struct sigaction &old) {
  return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction : old.sa_handler;
}

// signal()-style installation for SIGSEGV while Agora's handler is in place,
// with libc's flags for each flavour.
sighandler_t chain_signal(sighandler_t handler, int flags, bool mask_self) {
  if (handler == SIG_ERR) {
    errno = EINVAL;
    return SIG_ERR;
  }
  struct sigaction act, old;
  std::memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = flags;
  sigemptyset(&act.sa_mask);
  if (mask_self) sigaddset(&act.sa_mask, SIGSEGV);
  old = exchange_program_action(&act);
  return previous_handler(old);
}

std::atomic<SignalFn> g_signal{nullptr}, g_sysv_signal{nullptr}, g_bsd_signal{nullptr};

// A blocked SIGSEGV is not delivered for a fault: the kernel kills the
// process at once, without a word. Agora's next fault on a page that is not
// here would end the rank silently. So while Agora's handler is installed,
// SIGSEGV is left out of every set the program blocks (a thread's mask, a
// handler's sa_mask): a fault has no other meaning, and a SIGSEGV sent with
// kill() is the only thing that is no longer held back.
using MaskFn = int (*)(int, const sigset_t *, sigset_t *);
std::atomic<MaskFn> g_sigprocmask{nullptr}, g_pthread_sigmask{nullptr};

MaskFn next_mask_fn(std::atomic<MaskFn> &cache, const char *name) {
  MaskFn fn = cache.load(std::memory_order_acquire);
  if (!fn) {
    fn = (MaskFn)dlsym(RTLD_NEXT, name);
    cache.store(fn, std::memory_order_release);
  }
  return fn;
}

const sigset_t *without_sigsegv(const sigset_t *set, sigset_t *copy) {
  if (!set || !active() || sigismember(set, SIGSEGV) != 1) return set;
  *copy = *set;
  sigdelset(copy, SIGSEGV);
  return copy;
}
}  // namespace

extern "C" {

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) noexcept {
  if (sig != SIGSEGV && act && active() && sigismember(&act->sa_mask, SIGSEGV) == 1) {
    struct sigaction copy = *act;
    sigdelset(&copy.sa_mask, SIGSEGV);
    return __sigaction(sig, &copy, old);
  }
  if (sig != SIGSEGV || !active()) return __sigaction(sig, act, old);
  struct sigaction previous = exchange_program_action(act);
  if (old) *old = previous;
  return 0;
}

// glibc's signal() has BSD semantics: the handler stays, restarts system
// calls, and masks the signal while it runs.
sighandler_t signal(int sig, sighandler_t handler) noexcept {
  if (sig == SIGSEGV && active()) return chain_signal(handler, SA_RESTART, true);
  SignalFn next = next_signal_fn(g_signal, "signal");
  return next ? next(sig, handler) : SIG_ERR;
}

sighandler_t bsd_signal(int sig, sighandler_t handler) noexcept {
  if (sig == SIGSEGV && active()) return chain_signal(handler, SA_RESTART, true);
  SignalFn next = next_signal_fn(g_bsd_signal, "bsd_signal");
  return next ? next(sig, handler) : SIG_ERR;
}

// System V semantics: one-shot, not masked while it runs.
sighandler_t sysv_signal(int sig, sighandler_t handler) noexcept {
  if (sig == SIGSEGV && active()) return chain_signal(handler, SA_RESETHAND | SA_NODEFER, false);
  SignalFn next = next_signal_fn(g_sysv_signal, "sysv_signal");
  return next ? next(sig, handler) : SIG_ERR;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old) noexcept {
  sigset_t copy;
  if (how != SIG_UNBLOCK) set = without_sigsegv(set, &copy);
  MaskFn next = next_mask_fn(g_sigprocmask, "sigprocmask");
  if (!next) {
    errno = ENOSYS;
    return -1;
  }
  return next(how, set, old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) noexcept {
  sigset_t copy;
  if (how != SIG_UNBLOCK) set = without_sigsegv(set, &copy);
  MaskFn next = next_mask_fn(g_pthread_sigmask, "pthread_sigmask");
  return next ? next(how, set, old) : ENOSYS;
}

// What signal() means in strict X/Open compilations.
sighandler_t __sysv_signal(int sig, sighandler_t handler) noexcept { return sysv_signal(sig, handler); }

}  // extern "C"
