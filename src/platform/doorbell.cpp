// The doorbell: a real-time signal, sent thread-directed to a rank's napping
// service thread (which blocks it and waits for it in sigtimedwait). Rings
// carry a marker (SI_QUEUE with kRingMarker as value), so a signal of the
// same number that the application sends itself, and that the kernel hands
// to the waiting service thread, is recognised and handed back to the
// application's main thread: the doorbell never swallows a signal.
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <ctime>

#include "platform/platform.h"
#include "platform/signal_chain.h"

namespace agora::platform {

namespace {
constexpr uintptr_t kRingMarker = 0x41474f5241444f4full;  // "AGORADOO"
int g_signal = 0;
int g_main_tid = 0;  // where signals that are not rings go back to
std::atomic<uint64_t> g_handed_back{0};

sigset_t doorbell_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, g_signal);
  return set;
}

bool is_ring(const siginfo_t &info) {
  return info.si_code == SI_QUEUE && (uintptr_t)info.si_value.sival_ptr == kRingMarker &&
         info.si_pid != 0;
}

// Re-sends a signal the service thread took to the main thread, keeping the
// sender's pid, uid and value; the kernel lets a thread queue a signal with
// a chosen siginfo only as SI_QUEUE, so that is the code the handler sees.
// If the main thread has gone, to the process (another thread takes it).
void hand_back(siginfo_t info) {
  if (info.si_code != SI_QUEUE) {
    int pid = info.si_pid, uid = info.si_uid;
    std::memset(&info, 0, sizeof info);
    info.si_signo = g_signal;
    info.si_pid = pid;
    info.si_uid = uid;
    info.si_code = SI_QUEUE;
  }
  g_handed_back.fetch_add(1, std::memory_order_relaxed);
  if (syscall(SYS_rt_tgsigqueueinfo, getpid(), g_main_tid, g_signal, &info) == 0) return;
  syscall(SYS_rt_sigqueueinfo, getpid(), g_signal, &info);
}
}  // namespace

bool doorbell_setup(int requested, std::string *error) {
  int lo = SIGRTMIN, hi = SIGRTMAX;
  if (requested != 0) {
    if (requested < lo || requested > hi) {
      *error = "AGORA_DOORBELL_SIGNAL=" + std::to_string(requested) +
               " is not a real-time signal; allowed: " + std::to_string(lo) + ".." +
               std::to_string(hi) + " (SIGRTMIN..SIGRTMAX)";
      return false;
    }
    g_signal = requested;
  } else {
    // The first real-time signal nobody handles, skipping the lowest few
    // that libraries like to take.
    for (int s = lo + 5; s <= hi && !g_signal; ++s) {
      struct sigaction act;
      if (chain::real_sigaction(s, nullptr, &act) == 0 && !(act.sa_flags & SA_SIGINFO) &&
          act.sa_handler == SIG_DFL)
        g_signal = s;
    }
    if (!g_signal) {
      *error = "no free real-time signal for the doorbell (SIGRTMIN+5..SIGRTMAX all have "
               "handlers); choose one with AGORA_DOORBELL_SIGNAL";
      return false;
    }
  }
  g_main_tid = thread_id();
  return true;
}

int doorbell_signal() { return g_signal; }

void doorbell_block() {
  sigset_t set = doorbell_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool doorbell_wait(uint32_t us) {
  sigset_t set = doorbell_set();
  timespec ts{(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  siginfo_t info;
  if (sigtimedwait(&set, &info, &ts) != g_signal) return false;
  if (is_ring(info)) return true;
  hand_back(info);
  return false;
}

void doorbell_ring(int pid, int tid, int signo) {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  info.si_signo = signo;
  info.si_code = SI_QUEUE;
  info.si_pid = getpid();
  info.si_uid = getuid();
  info.si_value.sival_ptr = (void *)kRingMarker;
  syscall(SYS_rt_tgsigqueueinfo, pid, tid, signo, &info);
}

uint64_t doorbell_signals_handed_back() { return g_handed_back.load(std::memory_order_relaxed); }

uint64_t pid_namespace_id() {
  struct stat st;
  if (stat("/proc/self/ns/pid", &st) != 0) return 0;
  return (uint64_t)st.st_ino;
}

}  // namespace agora::platform
