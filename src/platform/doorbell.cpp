// The doorbell: a real-time signal, sent thread-directed to a rank's napping
// service thread (which blocks it and waits for it in sigtimedwait). Rings
// carry a marker (SI_QUEUE with kRingMarker as value), so a signal of the
// same number that the application sends itself, and that the kernel hands
// to the waiting service thread, is recognised and handed back to the
// application's main thread: the doorbell never swallows a signal. With a
// remote doorbell socket (remote_doorbell_linux.cpp) the thread waits in
// ppoll on a signalfd of the doorbell signal and on that socket instead.
#include <poll.h>
#include <sys/signalfd.h>
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
int g_main_tid = 0;         // where signals that are not rings go back to
int g_signal_fd = -1;       // the waiting thread's signalfd, made at its first wait on a socket
int g_signal_fd_signo = 0;  // the signal it takes
std::atomic<uint64_t> g_handed_back{0};
std::atomic<uint64_t> g_datagrams{0};  // remote rings taken by the waiting thread

sigset_t doorbell_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, g_signal);
  return set;
}

bool is_ring(const siginfo_t &info) {
  return info.si_code == SI_QUEUE && (uintptr_t)info.si_value.sival_ptr == kRingMarker && info.si_pid != 0;
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
               " is not a real-time signal; allowed: " + std::to_string(lo) + ".." + std::to_string(hi) +
               " (SIGRTMIN..SIGRTMAX)";
      return false;
    }
    g_signal = requested;
  } else {
    // The first real-time signal nobody handles, skipping the lowest few
    // that libraries like to take.
    for (int s = lo + 5; s <= hi && !g_signal; ++s) {
      struct sigaction act;
      if (chain::real_sigaction(s, nullptr, &act) == 0 && !(act.sa_flags & SA_SIGINFO) && act.sa_handler == SIG_DFL)
        g_signal = s;
    }
    if (!g_signal) {
      *error =
          "no free real-time signal for the doorbell (SIGRTMIN+5..SIGRTMAX all have "
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

namespace {
// Takes every doorbell signal pending for the calling thread (or the
// process) from the signalfd: true if one was a ring; the others go back.
bool read_signals() {
  bool rung = false;
  signalfd_siginfo s;
  while (read(g_signal_fd, &s, sizeof s) == (ssize_t)sizeof s) {
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    info.si_signo = (int)s.ssi_signo;
    info.si_code = s.ssi_code;
    info.si_pid = (pid_t)s.ssi_pid;
    info.si_uid = (uid_t)s.ssi_uid;
    info.si_value.sival_ptr = (void *)(uintptr_t)s.ssi_ptr;
    if (is_ring(info))
      rung = true;
    else
      hand_back(info);
  }
  return rung;
}

// The wait on the signal and a socket. The signalfd is made once per
// process (a later agora_init may pick another signal: its mask is reset).
bool wait_signal_or_socket(uint32_t us, int socket_fd) {
  if (g_signal_fd < 0 || g_signal_fd_signo != g_signal) {
    sigset_t set = doorbell_set();
    int fd = signalfd(g_signal_fd, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0) return false;  // cannot happen with a valid signal; the nap just ends
    g_signal_fd = fd;
    g_signal_fd_signo = g_signal;
  }
  pollfd fds[2] = {{g_signal_fd, POLLIN, 0}, {socket_fd, POLLIN, 0}};
  timespec ts{(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  if (ppoll(fds, 2, &ts, nullptr) <= 0) return false;
  bool rung = false;
  if (fds[0].revents & POLLIN) rung = read_signals();
  if (fds[1].revents & POLLIN) {
    int datagrams = remote_doorbell_drain(socket_fd);
    g_datagrams.fetch_add((uint64_t)datagrams, std::memory_order_relaxed);
    rung |= datagrams > 0;
  }
  return rung;
}
}  // namespace

bool doorbell_wait(uint32_t us, int socket_fd) {
  if (socket_fd >= 0) return wait_signal_or_socket(us, socket_fd);
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

uint64_t doorbell_datagrams_taken() { return g_datagrams.load(std::memory_order_relaxed); }

uint64_t pid_namespace_id() {
  struct stat st;
  if (stat("/proc/self/ns/pid", &st) != 0) return 0;
  return (uint64_t)st.st_ino;
}

}  // namespace agora::platform
