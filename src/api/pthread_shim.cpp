// The pthreads shim: a program linked with `ld --wrap=pthread_create` (and
// the other names in src/program/agora-program.wrap) calls these instead of
// libc's. Threads become agora threads placed over the ranks; mutexes,
// barriers, condition variables and semaphores in global memory become the
// Agora objects named by their address, shared by threads on every rank.
// Objects in private memory, and every call made while Agora is not
// initialised, go to libc's (__real_) functions: they keep working among the
// threads of one rank.
//
// pthread_t: an agora thread is ((rank + 1) << 48) | id (ids < 2^47), which no
// user-space pointer (libc's pthread_t) reaches; pthread_self returns the
// same value (agora_thread_self), so pthread_equal compares them.
// Attributes: the stack size and address are ignored (agora threads run on
// stacks the runtime provides); a detached thread is created as usual and
// never joined (it still counts towards finalize's wait, and towards its
// creator's slots: see docs/sync.md).
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include "agora/agora.h"
#include "common/log.h"

namespace agora {
// In agora_c.cpp: the runtime is live here (no message if not), and the lock
// named by an address, which need not hold a zero agora_lock_t.
bool shim_runtime_live();
int shim_lock_address(const void *address, bool lock);
}  // namespace agora

// CORE's agora_thread_exit: weak, so that this library links without it.
#pragma weak agora_thread_exit

extern "C" {
int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int __real_pthread_join(pthread_t, void **);
void __real_pthread_exit(void *) __attribute__((noreturn));
pthread_t __real_pthread_self(void);
int __real_pthread_equal(pthread_t, pthread_t);
int __real_pthread_detach(pthread_t);
int __real_pthread_mutex_init(pthread_mutex_t *, const pthread_mutexattr_t *);
int __real_pthread_mutex_lock(pthread_mutex_t *);
int __real_pthread_mutex_trylock(pthread_mutex_t *);
int __real_pthread_mutex_unlock(pthread_mutex_t *);
int __real_pthread_mutex_destroy(pthread_mutex_t *);
int __real_pthread_barrier_init(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned);
int __real_pthread_barrier_wait(pthread_barrier_t *);
int __real_pthread_barrier_destroy(pthread_barrier_t *);
int __real_pthread_cond_init(pthread_cond_t *, const pthread_condattr_t *);
int __real_pthread_cond_wait(pthread_cond_t *, pthread_mutex_t *);
int __real_pthread_cond_timedwait(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
int __real_pthread_cond_signal(pthread_cond_t *);
int __real_pthread_cond_broadcast(pthread_cond_t *);
int __real_pthread_cond_destroy(pthread_cond_t *);
int __real_pthread_once(pthread_once_t *, void (*)(void));
int __real_sem_init(sem_t *, int, unsigned);
int __real_sem_wait(sem_t *);
int __real_sem_trywait(sem_t *);
int __real_sem_post(sem_t *);
int __real_sem_getvalue(sem_t *, int *);
int __real_sem_destroy(sem_t *);
long __real_sysconf(int);
int __real_get_nprocs(void);
int __real_get_nprocs_conf(void);
}

static_assert(sizeof(pthread_t) == 8, "pthread_t carries a 64-bit agora thread handle");
static_assert(sizeof(pthread_mutex_t) >= sizeof(agora_lock_t), "a mutex holds an address-named lock");
static_assert(sizeof(pthread_barrier_t) >= sizeof(agora_thread_barrier_t), "barrier fits");
static_assert(sizeof(pthread_cond_t) >= sizeof(agora_cond_t), "condition variable fits");
static_assert(sizeof(sem_t) >= sizeof(agora_sem_t), "semaphore fits");

namespace {

// Agora is up in this process (not before agora_init, nor after finalize,
// nor in a fork() child). Checked without the API's error message.
bool agora_up() { return agora::shim_runtime_live(); }

bool shared(const void *object) { return agora_up() && agora_is_global(object); }

constexpr uint64_t kAgoraThread = 1ull << 48;  // agora handles are at or above this

int to_errno(int status) {
  switch (status) {
    case AGORA_OK:
      return 0;
    case AGORA_BUSY:
      return EBUSY;
    case AGORA_TIMEDOUT:
      return ETIMEDOUT;
    case AGORA_ERR_DEADLOCK:
      return EDEADLK;
    case AGORA_ERR_NOT_HELD:
      return EPERM;
    case AGORA_ERR_NO_MEMORY:
      return ENOMEM;
    case AGORA_ERR_MISUSE:
      return EAGAIN;
    default:
      return EINVAL;
  }
}

agora_lock_t *as_lock(pthread_mutex_t *m) { return reinterpret_cast<agora_lock_t *>(m); }

}  // namespace

extern "C" {

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
  if (!agora_up()) return __real_pthread_create(t, attr, fn, arg);
  agora_thread_t h;
  int status = agora_thread_create(&h, fn, arg);
  if (status != AGORA_OK) return to_errno(status);
  *t = (pthread_t)(((uint64_t)(h.rank + 1) << 48) | h.id);
  return 0;
}

int __wrap_pthread_join(pthread_t t, void **ret) {
  if ((uint64_t)t < kAgoraThread) return __real_pthread_join(t, ret);
  if ((uint64_t)t == agora_thread_self()) return EDEADLK;
  agora_thread_t h{(int32_t)(((uint64_t)t >> 48) - 1), 0, (uint64_t)t & ((1ull << 47) - 1)};
  int status = agora_thread_join(h, ret);
  return status == AGORA_OK ? 0 : status == AGORA_ERR_INVALID_ARGUMENT ? ESRCH : to_errno(status);
}

void __wrap_pthread_exit(void *ret) {
  if (agora_up()) {
    if (agora_thread_exit) agora_thread_exit(ret);
    agora::fatal("pthread_exit: agora_thread_exit is not in this build of Agora");
  }
  __real_pthread_exit(ret);
}

pthread_t __wrap_pthread_self(void) {
  if (!agora_up()) return __real_pthread_self();
  return (pthread_t)agora_thread_self();
}

int __wrap_pthread_equal(pthread_t a, pthread_t b) { return a == b; }

int __wrap_pthread_detach(pthread_t t) {
  if ((uint64_t)t < kAgoraThread) return __real_pthread_detach(t);
  return 0;  // never joined: finalize still waits for it
}

int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr) {
  if (!shared(m)) return __real_pthread_mutex_init(m, attr);
  int type = PTHREAD_MUTEX_NORMAL;
  if (attr) pthread_mutexattr_gettype(attr, &type);
  if (type == PTHREAD_MUTEX_RECURSIVE) {
    agora::log_error("pthread_mutex_init(%p): recursive mutexes in global memory are not supported", (void *)m);
    return ENOTSUP;
  }
  memset((void *)m, 0, sizeof *m);  // zero: an address-named lock
  return 0;
}

int __wrap_pthread_mutex_lock(pthread_mutex_t *m) {
  if (!shared(m)) return __real_pthread_mutex_lock(m);
  return to_errno(agora_lock(as_lock(m)));
}

int __wrap_pthread_mutex_trylock(pthread_mutex_t *m) {
  if (!shared(m)) return __real_pthread_mutex_trylock(m);
  return to_errno(agora_trylock(as_lock(m)));
}

int __wrap_pthread_mutex_unlock(pthread_mutex_t *m) {
  if (!shared(m)) return __real_pthread_mutex_unlock(m);
  return to_errno(agora_unlock(as_lock(m)));
}

int __wrap_pthread_mutex_destroy(pthread_mutex_t *m) {
  if (!shared(m)) return __real_pthread_mutex_destroy(m);
  return 0;
}

int __wrap_pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count) {
  if (!shared(b)) return __real_pthread_barrier_init(b, attr, count);
  return to_errno(agora_thread_barrier_init(reinterpret_cast<agora_thread_barrier_t *>(b), count));
}

int __wrap_pthread_barrier_wait(pthread_barrier_t *b) {
  if (!shared(b)) return __real_pthread_barrier_wait(b);
  int status = agora_thread_barrier_wait(reinterpret_cast<agora_thread_barrier_t *>(b));
  return status == AGORA_BARRIER_SERIAL ? PTHREAD_BARRIER_SERIAL_THREAD : to_errno(status);
}

int __wrap_pthread_barrier_destroy(pthread_barrier_t *b) {
  if (!shared(b)) return __real_pthread_barrier_destroy(b);
  return to_errno(agora_thread_barrier_destroy(reinterpret_cast<agora_thread_barrier_t *>(b)));
}

int __wrap_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr) {
  if (!shared(c)) return __real_pthread_cond_init(c, attr);
  return to_errno(agora_cond_init(reinterpret_cast<agora_cond_t *>(c)));
}

int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  if (!shared(c)) return __real_pthread_cond_wait(c, m);
  if (!shared(m)) return EINVAL;  // a shared condition variable needs a shared mutex
  return to_errno(agora_cond_wait(reinterpret_cast<agora_cond_t *>(c), as_lock(m)));
}

int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime) {
  if (!shared(c)) return __real_pthread_cond_timedwait(c, m, abstime);
  if (!shared(m) || !abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000) return EINVAL;
  // abstime is on CLOCK_REALTIME (the default condition clock); Agora's
  // deadlines are agora_wtime() values.
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  double left = (double)(abstime->tv_sec - now.tv_sec) + (abstime->tv_nsec - now.tv_nsec) * 1e-9;
  double deadline = agora_wtime() + (left > 0 ? left : 0);
  return to_errno(agora_cond_timedwait(reinterpret_cast<agora_cond_t *>(c), as_lock(m), deadline));
}

int __wrap_pthread_cond_signal(pthread_cond_t *c) {
  if (!shared(c)) return __real_pthread_cond_signal(c);
  return to_errno(agora_cond_signal(reinterpret_cast<agora_cond_t *>(c)));
}

int __wrap_pthread_cond_broadcast(pthread_cond_t *c) {
  if (!shared(c)) return __real_pthread_cond_broadcast(c);
  return to_errno(agora_cond_broadcast(reinterpret_cast<agora_cond_t *>(c)));
}

int __wrap_pthread_cond_destroy(pthread_cond_t *c) {
  if (!shared(c)) return __real_pthread_cond_destroy(c);
  return to_errno(agora_cond_destroy(reinterpret_cast<agora_cond_t *>(c)));
}

// Once per job: the control word names the lock that orders the callers
// (an address-named lock), and the flag written under it reaches every later
// caller with the writes init made. (No unlocked fast path: under a relaxed
// protocol seeing the flag without the acquire would not show init's writes.)
int __wrap_pthread_once(pthread_once_t *once, void (*init)(void)) {
  if (!shared(once)) return __real_pthread_once(once, init);
  if (int status = agora::shim_lock_address(once, true)) return to_errno(status);
  if (*once == 0) {
    init();
    *once = 1;
  }
  return to_errno(agora::shim_lock_address(once, false));
}

// sem_* report failure as -1 with errno set.
static int sem_result(int status, int error) {
  if (status == AGORA_OK) return 0;
  errno = error;
  return -1;
}

int __wrap_sem_init(sem_t *s, int pshared, unsigned value) {
  if (!shared(s)) return __real_sem_init(s, pshared, value);
  int status = agora_sem_init(reinterpret_cast<agora_sem_t *>(s), value);
  return sem_result(status, EINVAL);
}

int __wrap_sem_wait(sem_t *s) {
  if (!shared(s)) return __real_sem_wait(s);
  int status = agora_sem_wait(reinterpret_cast<agora_sem_t *>(s));
  return sem_result(status, to_errno(status));
}

int __wrap_sem_trywait(sem_t *s) {
  if (!shared(s)) return __real_sem_trywait(s);
  int status = agora_sem_trywait(reinterpret_cast<agora_sem_t *>(s));
  return sem_result(status, status == AGORA_BUSY ? EAGAIN : to_errno(status));
}

int __wrap_sem_post(sem_t *s) {
  if (!shared(s)) return __real_sem_post(s);
  int status = agora_sem_post(reinterpret_cast<agora_sem_t *>(s));
  return sem_result(status, status == AGORA_ERR_INVALID_ARGUMENT ? EOVERFLOW : to_errno(status));
}

int __wrap_sem_getvalue(sem_t *s, int *value) {
  if (!shared(s)) return __real_sem_getvalue(s, value);
  int status = agora_sem_getvalue(reinterpret_cast<agora_sem_t *>(s), value);
  return sem_result(status, to_errno(status));
}

int __wrap_sem_destroy(sem_t *s) {
  if (!shared(s)) return __real_sem_destroy(s);
  int status = agora_sem_destroy(reinterpret_cast<agora_sem_t *>(s));
  return sem_result(status, to_errno(status));
}

// The worker slots are the program's processors.
long __wrap_sysconf(int name) {
  if (agora_up() && (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF)) return agora_thread_slots();
  return __real_sysconf(name);
}

int __wrap_get_nprocs(void) { return agora_up() ? agora_thread_slots() : __real_get_nprocs(); }
int __wrap_get_nprocs_conf(void) { return agora_up() ? agora_thread_slots() : __real_get_nprocs_conf(); }

}  // extern "C"
