// The pthreads calls that take a thread handle and are not otherwise
// shimmed (pthread_shim.cpp has create, join, self, equal, detach). An agora
// thread's pthread_t is ((rank + 1) << 48) | id, not the address of a libc
// thread descriptor: handed to libc's function, it crashed the rank. Wrapped
// here (src/program/agora-program.wrap) in a program built with agoracc:
//
// - a handle below 2^48 is a libc thread (one the program started before
//   Agora, or a std::thread): libc's function, as before;
// - the calling agora thread's own handle (pthread_self()): libc's function
//   on the OS thread that runs it, which is what the call means (a name,
//   affinity, scheduling, CPU clock or signal of the caller);
// - another agora thread (it may run on another rank, where this process
//   cannot reach it): refused with ENOTSUP and a message naming the call.
//   Cancellation and try/timed joins are refused for every agora thread.
//
// docs/programs.md ("Threads and synchronisation") states the same.
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>

#include <cstdint>

#include "agora/agora.h"
#include "common/log.h"

namespace agora {
bool shim_runtime_live();  // agora_c.cpp
}

extern "C" {
int __real_pthread_cancel(pthread_t);
int __real_pthread_kill(pthread_t, int);
int __real_pthread_sigqueue(pthread_t, int, const union sigval);
int __real_pthread_setname_np(pthread_t, const char *);
int __real_pthread_getname_np(pthread_t, char *, size_t);
int __real_pthread_tryjoin_np(pthread_t, void **);
int __real_pthread_timedjoin_np(pthread_t, void **, const struct timespec *);
int __real_pthread_clockjoin_np(pthread_t, void **, clockid_t, const struct timespec *);
int __real_pthread_getattr_np(pthread_t, pthread_attr_t *);
int __real_pthread_setaffinity_np(pthread_t, size_t, const cpu_set_t *);
int __real_pthread_getaffinity_np(pthread_t, size_t, cpu_set_t *);
int __real_pthread_setschedparam(pthread_t, int, const struct sched_param *);
int __real_pthread_getschedparam(pthread_t, int *, struct sched_param *);
int __real_pthread_setschedprio(pthread_t, int);
int __real_pthread_getcpuclockid(pthread_t, clockid_t *);
pthread_t __real_pthread_self(void);
}

namespace {

constexpr uint64_t kAgoraThread = 1ull << 48;  // as in pthread_shim.cpp

enum class Target { Libc, Self, Other };

Target target_of(pthread_t t) {
  if ((uint64_t)t < kAgoraThread || !agora::shim_runtime_live()) return Target::Libc;
  return (uint64_t)t == agora_thread_self() ? Target::Self : Target::Other;
}

int refuse(const char *fn, pthread_t t, const char *why) {
  uint64_t h = (uint64_t)t;
  if (h == agora_thread_self())
    agora::log_error("%s(pthread_self()): %s; it returns ENOTSUP (docs/programs.md)", fn, why);
  else
    agora::log_error("%s(agora thread %llu on rank %d): %s; it returns ENOTSUP (docs/programs.md)", fn,
                     (unsigned long long)(h & ((1ull << 48) - 1)), (int)(h >> 48) - 1, why);
  return ENOTSUP;
}

constexpr const char *kOnlySelf =
    "only the calling thread's own handle (pthread_self()) is supported on agora threads in a program built "
    "with agoracc: another thread may run on another rank";

// The call on the caller's own OS thread, the call refused, or libc's.
#define AGORA_HANDLE_CALL(fn, t, ...)                           \
  switch (target_of(t)) {                                       \
    case Target::Libc:                                          \
      return __real_##fn(t, ##__VA_ARGS__);                     \
    case Target::Self:                                          \
      return __real_##fn(__real_pthread_self(), ##__VA_ARGS__); \
    case Target::Other:                                         \
      break;                                                    \
  }                                                             \
  return refuse(#fn, t, kOnlySelf)

}  // namespace

extern "C" {

int __wrap_pthread_cancel(pthread_t t) {
  if (target_of(t) == Target::Libc) return __real_pthread_cancel(t);
  return refuse("pthread_cancel", t,
                "cancellation is not supported on agora threads in a program built with agoracc (end the "
                "thread by returning from it or with pthread_exit)");
}

int __wrap_pthread_tryjoin_np(pthread_t t, void **ret) {
  if (target_of(t) == Target::Libc) return __real_pthread_tryjoin_np(t, ret);
  return refuse("pthread_tryjoin_np", t,
                "joins that may not wait are not supported on agora threads in a program built with agoracc "
                "(use pthread_join)");
}

int __wrap_pthread_timedjoin_np(pthread_t t, void **ret, const struct timespec *abstime) {
  if (target_of(t) == Target::Libc) return __real_pthread_timedjoin_np(t, ret, abstime);
  return refuse("pthread_timedjoin_np", t,
                "joins with a time limit are not supported on agora threads in a program built with agoracc "
                "(use pthread_join)");
}

int __wrap_pthread_clockjoin_np(pthread_t t, void **ret, clockid_t clock, const struct timespec *abstime) {
  if (target_of(t) == Target::Libc) return __real_pthread_clockjoin_np(t, ret, clock, abstime);
  return refuse("pthread_clockjoin_np", t,
                "joins with a time limit are not supported on agora threads in a program built with agoracc "
                "(use pthread_join)");
}

int __wrap_pthread_getattr_np(pthread_t t, pthread_attr_t *attr) {
  if (target_of(t) == Target::Libc) return __real_pthread_getattr_np(t, attr);
  // libc would describe the OS thread's stack, not the global stack the
  // agora thread runs on.
  return refuse("pthread_getattr_np", t,
                "the attributes of an agora thread (its stack is in global memory) are not available in a "
                "program built with agoracc");
}

int __wrap_pthread_kill(pthread_t t, int sig) { AGORA_HANDLE_CALL(pthread_kill, t, sig); }

int __wrap_pthread_sigqueue(pthread_t t, int sig, const union sigval value) {
  AGORA_HANDLE_CALL(pthread_sigqueue, t, sig, value);
}

int __wrap_pthread_setname_np(pthread_t t, const char *name) { AGORA_HANDLE_CALL(pthread_setname_np, t, name); }

int __wrap_pthread_getname_np(pthread_t t, char *name, size_t len) {
  AGORA_HANDLE_CALL(pthread_getname_np, t, name, len);
}

int __wrap_pthread_setaffinity_np(pthread_t t, size_t size, const cpu_set_t *set) {
  AGORA_HANDLE_CALL(pthread_setaffinity_np, t, size, set);
}

int __wrap_pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *set) {
  AGORA_HANDLE_CALL(pthread_getaffinity_np, t, size, set);
}

int __wrap_pthread_setschedparam(pthread_t t, int policy, const struct sched_param *param) {
  AGORA_HANDLE_CALL(pthread_setschedparam, t, policy, param);
}

int __wrap_pthread_getschedparam(pthread_t t, int *policy, struct sched_param *param) {
  AGORA_HANDLE_CALL(pthread_getschedparam, t, policy, param);
}

int __wrap_pthread_setschedprio(pthread_t t, int prio) { AGORA_HANDLE_CALL(pthread_setschedprio, t, prio); }

int __wrap_pthread_getcpuclockid(pthread_t t, clockid_t *clock) { AGORA_HANDLE_CALL(pthread_getcpuclockid, t, clock); }

}  // extern "C"
