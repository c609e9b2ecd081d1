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
//
// Mutexes keep glibc's layout where it matters: the first 8 bytes stay zero
// (an address-named Agora lock, the mutex's address its key) and the type
// is glibc's __kind, so the static initialisers (PTHREAD_MUTEX_INITIALIZER,
// PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, ...) work unchanged. Who holds a
// lock is the lock service's record (exact, local); a recursive mutex's
// extra locks are counted per thread (only the holder touches the count).
// Spin locks are address-named locks too. Read-write locks are built from
// an internal address-named lock, two condition variables and a state word
// inside the pthread_rwlock_t (real shared readers). Timed waits on mutexes
// and semaphores retry a try-acquire with a growing nap (docs/programs.md).
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "agora/agora.h"
#include "common/log.h"
#include "runtime/store_trace.h"

namespace agora {
// In agora_c.cpp: the runtime is live here (no message if not), and the lock
// named by an address, which need not hold a zero agora_lock_t.
bool shim_runtime_live();
int shim_lock_address(const void *address, bool lock);
int shim_trylock_address(const void *address, bool program_try);  // AGORA_OK or AGORA_BUSY
bool shim_holds_address(const void *address);                     // the calling thread holds that lock
void shim_nap(double seconds);                                    // sleeps, on the thread's private stack
// program_process_attrs.cpp: this rank takes the job's environment and
// process attributes changed before the synchronisation that just ended.
void program_attrs_catch_up();
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
int __real_pthread_mutex_timedlock(pthread_mutex_t *, const struct timespec *);
int __real_pthread_mutex_clocklock(pthread_mutex_t *, clockid_t, const struct timespec *);
int __real_pthread_mutex_consistent(pthread_mutex_t *);
int __real_pthread_mutex_getprioceiling(const pthread_mutex_t *, int *);
int __real_pthread_mutex_setprioceiling(pthread_mutex_t *, int, int *);
int __real_pthread_rwlock_init(pthread_rwlock_t *, const pthread_rwlockattr_t *);
int __real_pthread_rwlock_destroy(pthread_rwlock_t *);
int __real_pthread_rwlock_rdlock(pthread_rwlock_t *);
int __real_pthread_rwlock_tryrdlock(pthread_rwlock_t *);
int __real_pthread_rwlock_timedrdlock(pthread_rwlock_t *, const struct timespec *);
int __real_pthread_rwlock_clockrdlock(pthread_rwlock_t *, clockid_t, const struct timespec *);
int __real_pthread_rwlock_wrlock(pthread_rwlock_t *);
int __real_pthread_rwlock_trywrlock(pthread_rwlock_t *);
int __real_pthread_rwlock_timedwrlock(pthread_rwlock_t *, const struct timespec *);
int __real_pthread_rwlock_clockwrlock(pthread_rwlock_t *, clockid_t, const struct timespec *);
int __real_pthread_rwlock_unlock(pthread_rwlock_t *);
int __real_pthread_spin_init(pthread_spinlock_t *, int);
int __real_pthread_spin_destroy(pthread_spinlock_t *);
int __real_pthread_spin_lock(pthread_spinlock_t *);
int __real_pthread_spin_trylock(pthread_spinlock_t *);
int __real_pthread_spin_unlock(pthread_spinlock_t *);
int __real_pthread_barrier_init(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned);
int __real_pthread_barrier_wait(pthread_barrier_t *);
int __real_pthread_barrier_destroy(pthread_barrier_t *);
int __real_pthread_cond_init(pthread_cond_t *, const pthread_condattr_t *);
int __real_pthread_cond_wait(pthread_cond_t *, pthread_mutex_t *);
int __real_pthread_cond_timedwait(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
int __real_pthread_cond_clockwait(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
int __real_pthread_cond_signal(pthread_cond_t *);
int __real_pthread_cond_broadcast(pthread_cond_t *);
int __real_pthread_cond_destroy(pthread_cond_t *);
int __real_pthread_once(pthread_once_t *, void (*)(void));
int __real_sem_init(sem_t *, int, unsigned);
int __real_sem_wait(sem_t *);
int __real_sem_trywait(sem_t *);
int __real_sem_timedwait(sem_t *, const struct timespec *);
int __real_sem_clockwait(sem_t *, clockid_t, const struct timespec *);
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

// After a synchronisation that succeeded (result 0), the changes to the
// process attributes it orders after become this rank's too.
int synchronised(int result) {
  if (result == 0) agora::program_attrs_catch_up();
  return result;
}

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

// ---- time ------------------------------------------------------------------
bool valid_time(const struct timespec *t) { return t && t->tv_nsec >= 0 && t->tv_nsec < 1000000000; }
bool valid_clock(clockid_t clock) { return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC; }

// An absolute deadline on `clock` as an agora_wtime() value.
double wtime_deadline(clockid_t clock, const struct timespec *abstime) {
  struct timespec now;
  clock_gettime(clock, &now);
  double left = (double)(abstime->tv_sec - now.tv_sec) + (double)(abstime->tv_nsec - now.tv_nsec) * 1e-9;
  return agora_wtime() + (left > 0 ? left : 0);
}

// A timed acquire as try-acquires: `attempt` returns AGORA_BUSY while the
// object is taken. Tries first (POSIX: never a timeout when the object is
// free), then naps between tries, 20 us doubling up to 2 ms and never past
// the deadline: at most ~500 requests a second per waiter, and a free
// object is noticed within 2 ms. Returns AGORA_TIMEDOUT once the deadline
// passed with every try refused, or AGORA_ERR_INVALID_ARGUMENT (abstime or
// clock invalid, checked only when a wait is needed, as POSIX asks).
template <typename Attempt>
int retry_until(clockid_t clock, const struct timespec *abstime, Attempt attempt) {
  int status = attempt();
  if (status != AGORA_BUSY) return status;
  if (!valid_time(abstime) || !valid_clock(clock)) return AGORA_ERR_INVALID_ARGUMENT;
  double deadline = wtime_deadline(clock, abstime), nap = 20e-6;
  for (;;) {
    double left = deadline - agora_wtime();
    if (left <= 0) return AGORA_TIMEDOUT;
    agora::shim_nap(std::min(nap, left));
    nap = std::min(nap * 2, 2e-3);
    status = attempt();
    if (status != AGORA_BUSY) return status;
  }
}

// A store the shim makes to global memory inside a lock's span (the state
// of a read-write lock, pthread_once's flag): a program built with store
// tracing tells regc exactly what its spans stored, and Agora's own code is
// not instrumented, so it says so itself.
void stored(const void *address, uint32_t bytes) {
  if (agora::store_trace_active()) agora::store_trace_record(address, bytes);
}

// ---- mutexes -----------------------------------------------------------------
// glibc's type field (__kind): PTHREAD_MUTEX_NORMAL/DEFAULT 0, RECURSIVE 1,
// ERRORCHECK 2, ADAPTIVE_NP 3 (a normal mutex here) in its low two bits.
int mutex_type(const pthread_mutex_t *m) { return m->__data.__kind & 3; }

// Extra locks (beyond the first) of the recursive mutexes this thread holds.
thread_local std::unordered_map<const void *, unsigned> t_recursion;

bool holds(const void *lock) { return agora::shim_holds_address(lock); }

// The owner locks a recursive mutex again: count it.
int relock_recursive(const pthread_mutex_t *m) {
  unsigned &extra = t_recursion[m];
  if (extra == UINT_MAX) return EAGAIN;  // the count would overflow
  extra++;
  return 0;
}

// What lock, trylock and timedlock do when the calling thread already holds
// the mutex (-1: nothing special, go on to the Agora lock).
int owner_relock(pthread_mutex_t *m, int errorcheck_status) {
  switch (mutex_type(m)) {
    case PTHREAD_MUTEX_RECURSIVE:
      if (holds(m)) return relock_recursive(m);
      return -1;
    case PTHREAD_MUTEX_ERRORCHECK:
      if (holds(m)) return errorcheck_status;
      return -1;
    default:
      return -1;
  }
}

int mutex_timedlock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime) {
  int special = owner_relock(m, EDEADLK);
  if (special >= 0) return special;
  // A normal mutex its owner locks again: every try is refused, and the
  // wait ends at the deadline (glibc does the same).
  return to_errno(retry_until(clock, abstime, [m] { return agora::shim_trylock_address(m, false); }));
}

// ---- read-write locks ----------------------------------------------------------
// Inside a pthread_rwlock_t in global memory (zero-filled: unlocked): an
// address-named lock guarding the state, and condition variables for the
// waiting readers and writers. The state is read and written only under
// the lock, so it is consistent under every protocol; a reader's and a
// writer's rwlock calls are acquires and releases of that lock, which
// carry the protected data's consistency too.
struct RwLock {
  agora_lock_t lock;
  agora_cond_t readers_cv;
  agora_cond_t writers_cv;
  uint32_t readers;          // read locks held
  uint32_t writer;           // 1 while a writer holds it
  uint32_t kind;             // glibc's __flags: PTHREAD_RWLOCK_PREFER_*_NP
  uint32_t writers_waiting;  // writers waiting in the condition
};
static_assert(sizeof(RwLock) <= sizeof(pthread_rwlock_t), "the read-write lock's state fits");
static_assert(offsetof(RwLock, kind) == offsetof(pthread_rwlock_t, __data.__flags),
              "PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP's kind is read where glibc puts it");

// Read locks (n > 0) or the write lock (-1) this thread holds, per rwlock.
thread_local std::unordered_map<const void *, int> t_rwlocks;

int rw_held(const void *rw) {
  auto it = t_rwlocks.find(rw);
  return it == t_rwlocks.end() ? 0 : it->second;
}
void rw_set(const void *rw, int held) {
  if (held)
    t_rwlocks[rw] = held;
  else
    t_rwlocks.erase(rw);
}

template <typename T>
void rw_store(T *field, T value) {
  *field = value;
  stored(field, sizeof *field);
}

// How a rdlock or wrlock call waits: not at all (try), without end, or until
// abstime on clock.
struct RwWait {
  bool try_only = false;
  clockid_t clock = CLOCK_REALTIME;
  const struct timespec *abstime = nullptr;
};

// Waits on cv (the state lock held) as w says. AGORA_OK (woken),
// AGORA_TIMEDOUT, or an error.
int rw_wait(RwLock *r, agora_cond_t *cv, const RwWait &w, double *deadline) {
  if (!w.abstime) return agora_cond_wait(cv, &r->lock);
  if (*deadline < 0) {
    if (!valid_time(w.abstime) || !valid_clock(w.clock)) return AGORA_ERR_INVALID_ARGUMENT;
    *deadline = wtime_deadline(w.clock, w.abstime);
  }
  return agora_cond_timedwait(cv, &r->lock, *deadline);
}

int rw_rdlock(pthread_rwlock_t *rw, const RwWait &w) {
  auto *r = reinterpret_cast<RwLock *>(rw);
  int mine = rw_held(rw);
  if (mine < 0) return w.try_only ? EBUSY : EDEADLK;  // this thread writes
  if (mine == INT_MAX) return EAGAIN;
  if (int status = agora_lock(&r->lock)) return to_errno(status);
  double deadline = -1;
  int status = AGORA_OK;
  for (;;) {
    // A thread that already reads always gets another read lock (a waiting
    // writer must not deadlock it); writers first only with
    // PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, as in glibc.
    bool can =
        !r->writer && (mine > 0 || r->kind != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP || r->writers_waiting == 0);
    if (can && r->readers == UINT32_MAX) {
      status = AGORA_ERR_MISUSE;  // EAGAIN: too many read locks
      break;
    }
    if (can) {
      rw_store(&r->readers, r->readers + 1);
      rw_set(rw, mine + 1);
      status = AGORA_OK;
      break;
    }
    if (w.try_only || status == AGORA_TIMEDOUT) {
      status = w.try_only ? AGORA_BUSY : AGORA_TIMEDOUT;
      break;
    }
    status = rw_wait(r, &r->readers_cv, w, &deadline);
    if (status != AGORA_OK && status != AGORA_TIMEDOUT) break;
  }
  int unlocked = agora_unlock(&r->lock);
  return to_errno(status ? status : unlocked);
}

int rw_wrlock(pthread_rwlock_t *rw, const RwWait &w) {
  auto *r = reinterpret_cast<RwLock *>(rw);
  if (rw_held(rw)) return w.try_only ? EBUSY : EDEADLK;  // this thread reads or writes it already
  if (int status = agora_lock(&r->lock)) return to_errno(status);
  double deadline = -1;
  int status = AGORA_OK;
  for (;;) {
    if (!r->writer && r->readers == 0) {
      rw_store(&r->writer, 1u);
      rw_set(rw, -1);
      status = AGORA_OK;
      break;
    }
    if (w.try_only || status == AGORA_TIMEDOUT) {
      status = w.try_only ? AGORA_BUSY : AGORA_TIMEDOUT;
      break;
    }
    rw_store(&r->writers_waiting, r->writers_waiting + 1);
    status = rw_wait(r, &r->writers_cv, w, &deadline);
    rw_store(&r->writers_waiting, r->writers_waiting - 1);
    if (status != AGORA_OK && status != AGORA_TIMEDOUT) break;
  }
  // A writer that gives up may have been what held new readers back.
  if (status != AGORA_OK && r->writers_waiting == 0 && r->kind == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)
    agora_cond_broadcast(&r->readers_cv);
  int unlocked = agora_unlock(&r->lock);
  return to_errno(status ? status : unlocked);
}

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
  return synchronised(status == AGORA_OK ? 0 : status == AGORA_ERR_INVALID_ARGUMENT ? ESRCH : to_errno(status));
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
  int type = PTHREAD_MUTEX_NORMAL, robust = PTHREAD_MUTEX_STALLED, protocol = PTHREAD_PRIO_NONE;
  if (attr) {
    pthread_mutexattr_gettype(attr, &type);
    pthread_mutexattr_getrobust(attr, &robust);
    pthread_mutexattr_getprotocol(attr, &protocol);
  }
  if (robust != PTHREAD_MUTEX_STALLED) {
    agora::log_error(
        "pthread_mutex_init(%p): robust mutexes in global memory are not supported (a thread's "
        "end does not release the Agora lock)",
        (void *)m);
    return ENOTSUP;
  }
  if (protocol == PTHREAD_PRIO_PROTECT) {
    agora::log_error("pthread_mutex_init(%p): priority-ceiling mutexes in global memory are not supported", (void *)m);
    return ENOTSUP;
  }
  memset((void *)m, 0, sizeof *m);  // zero: an address-named lock
  m->__data.__kind = type & 3;      // where the static initialisers put it
  return 0;
}

int __wrap_pthread_mutex_lock(pthread_mutex_t *m) {
  if (!shared(m)) return __real_pthread_mutex_lock(m);
  int special = owner_relock(m, EDEADLK);
  if (special >= 0) return special;
  return synchronised(to_errno(agora::shim_lock_address(m, true)));
}

int __wrap_pthread_mutex_trylock(pthread_mutex_t *m) {
  if (!shared(m)) return __real_pthread_mutex_trylock(m);
  int special = owner_relock(m, EBUSY);
  if (special >= 0) return special;
  return to_errno(agora::shim_trylock_address(m, true));
}

int __wrap_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime) {
  if (!shared(m)) return __real_pthread_mutex_timedlock(m, abstime);
  return mutex_timedlock(m, CLOCK_REALTIME, abstime);
}

int __wrap_pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime) {
  if (!shared(m)) return __real_pthread_mutex_clocklock(m, clock, abstime);
  return mutex_timedlock(m, clock, abstime);
}

int __wrap_pthread_mutex_unlock(pthread_mutex_t *m) {
  if (!shared(m)) return __real_pthread_mutex_unlock(m);
  int type = mutex_type(m);
  if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) {
    if (!holds(m)) return EPERM;  // POSIX: not the owner (no message: a defined answer)
    if (type == PTHREAD_MUTEX_RECURSIVE) {
      auto it = t_recursion.find(m);
      if (it != t_recursion.end()) {
        if (--it->second == 0) t_recursion.erase(it);
        return 0;
      }
    }
  }
  return to_errno(agora::shim_lock_address(m, false));
}

int __wrap_pthread_mutex_destroy(pthread_mutex_t *m) {
  if (!shared(m)) return __real_pthread_mutex_destroy(m);
  if (holds(m)) return EBUSY;
  return 0;
}

// Robust and priority-ceiling mutexes are refused at init, so for a mutex
// in global memory these have POSIX's answer for the other kinds.
int __wrap_pthread_mutex_consistent(pthread_mutex_t *m) {
  if (!shared(m)) return __real_pthread_mutex_consistent(m);
  return EINVAL;  // not a robust mutex
}

int __wrap_pthread_mutex_getprioceiling(const pthread_mutex_t *m, int *ceiling) {
  if (!shared(m)) return __real_pthread_mutex_getprioceiling(m, ceiling);
  return EINVAL;  // not PTHREAD_PRIO_PROTECT
}

int __wrap_pthread_mutex_setprioceiling(pthread_mutex_t *m, int ceiling, int *old) {
  if (!shared(m)) return __real_pthread_mutex_setprioceiling(m, ceiling, old);
  return EINVAL;
}

int __wrap_pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr) {
  if (!shared(rw)) return __real_pthread_rwlock_init(rw, attr);
  int kind = PTHREAD_RWLOCK_DEFAULT_NP;
  if (attr) pthread_rwlockattr_getkind_np(attr, &kind);
  memset((void *)rw, 0, sizeof *rw);
  reinterpret_cast<RwLock *>(rw)->kind = (uint32_t)kind;
  return 0;
}

int __wrap_pthread_rwlock_destroy(pthread_rwlock_t *rw) {
  if (!shared(rw)) return __real_pthread_rwlock_destroy(rw);
  if (rw_held(rw)) return EBUSY;
  auto *r = reinterpret_cast<RwLock *>(rw);
  if (int status = agora_lock(&r->lock)) return to_errno(status);
  bool busy = r->readers || r->writer || r->writers_waiting;
  int status = agora_unlock(&r->lock);
  return busy ? EBUSY : to_errno(status);
}

int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t *rw) {
  if (!shared(rw)) return __real_pthread_rwlock_rdlock(rw);
  return rw_rdlock(rw, RwWait{});
}

int __wrap_pthread_rwlock_tryrdlock(pthread_rwlock_t *rw) {
  if (!shared(rw)) return __real_pthread_rwlock_tryrdlock(rw);
  return rw_rdlock(rw, RwWait{true, CLOCK_REALTIME, nullptr});
}

int __wrap_pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abstime) {
  if (!shared(rw)) return __real_pthread_rwlock_timedrdlock(rw, abstime);
  if (!abstime) return EINVAL;
  return rw_rdlock(rw, RwWait{false, CLOCK_REALTIME, abstime});
}

int __wrap_pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime) {
  if (!shared(rw)) return __real_pthread_rwlock_clockrdlock(rw, clock, abstime);
  if (!abstime) return EINVAL;
  return rw_rdlock(rw, RwWait{false, clock, abstime});
}

int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t *rw) {
  if (!shared(rw)) return __real_pthread_rwlock_wrlock(rw);
  return rw_wrlock(rw, RwWait{});
}

int __wrap_pthread_rwlock_trywrlock(pthread_rwlock_t *rw) {
  if (!shared(rw)) return __real_pthread_rwlock_trywrlock(rw);
  return rw_wrlock(rw, RwWait{true, CLOCK_REALTIME, nullptr});
}

int __wrap_pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abstime) {
  if (!shared(rw)) return __real_pthread_rwlock_timedwrlock(rw, abstime);
  if (!abstime) return EINVAL;
  return rw_wrlock(rw, RwWait{false, CLOCK_REALTIME, abstime});
}

int __wrap_pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime) {
  if (!shared(rw)) return __real_pthread_rwlock_clockwrlock(rw, clock, abstime);
  if (!abstime) return EINVAL;
  return rw_wrlock(rw, RwWait{false, clock, abstime});
}

int __wrap_pthread_rwlock_unlock(pthread_rwlock_t *rw) {
  if (!shared(rw)) return __real_pthread_rwlock_unlock(rw);
  int mine = rw_held(rw);
  if (!mine) return EPERM;
  auto *r = reinterpret_cast<RwLock *>(rw);
  if (int status = agora_lock(&r->lock)) return to_errno(status);
  if (mine < 0) {
    rw_store(&r->writer, 0u);
    if (r->writers_waiting) agora_cond_signal(&r->writers_cv);
    agora_cond_broadcast(&r->readers_cv);
  } else {
    rw_store(&r->readers, r->readers - 1);
    if (r->readers == 0 && r->writers_waiting) agora_cond_signal(&r->writers_cv);
  }
  rw_set(rw, mine < 0 ? 0 : mine - 1);
  return to_errno(agora_unlock(&r->lock));
}

// Spin locks: address-named Agora locks (the 4-byte pthread_spinlock_t is
// only their name; waiting is Agora's lock wait, not a spin).
static const void *spin_name(pthread_spinlock_t *s) { return (const void *)(uintptr_t)s; }

int __wrap_pthread_spin_init(pthread_spinlock_t *s, int pshared) {
  if (!shared(spin_name(s))) return __real_pthread_spin_init(s, pshared);
  *s = 0;
  return 0;
}

int __wrap_pthread_spin_destroy(pthread_spinlock_t *s) {
  if (!shared(spin_name(s))) return __real_pthread_spin_destroy(s);
  return holds(spin_name(s)) ? EBUSY : 0;
}

int __wrap_pthread_spin_lock(pthread_spinlock_t *s) {
  if (!shared(spin_name(s))) return __real_pthread_spin_lock(s);
  return to_errno(agora::shim_lock_address(spin_name(s), true));
}

int __wrap_pthread_spin_trylock(pthread_spinlock_t *s) {
  if (!shared(spin_name(s))) return __real_pthread_spin_trylock(s);
  return to_errno(agora::shim_trylock_address(spin_name(s), true));
}

int __wrap_pthread_spin_unlock(pthread_spinlock_t *s) {
  if (!shared(spin_name(s))) return __real_pthread_spin_unlock(s);
  return to_errno(agora::shim_lock_address(spin_name(s), false));
}

int __wrap_pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count) {
  if (!shared(b)) return __real_pthread_barrier_init(b, attr, count);
  return to_errno(agora_thread_barrier_init(reinterpret_cast<agora_thread_barrier_t *>(b), count));
}

int __wrap_pthread_barrier_wait(pthread_barrier_t *b) {
  if (!shared(b)) return __real_pthread_barrier_wait(b);
  int status = agora_thread_barrier_wait(reinterpret_cast<agora_thread_barrier_t *>(b));
  int result = synchronised(status == AGORA_BARRIER_SERIAL ? 0 : to_errno(status));
  return status == AGORA_BARRIER_SERIAL ? PTHREAD_BARRIER_SERIAL_THREAD : result;
}

int __wrap_pthread_barrier_destroy(pthread_barrier_t *b) {
  if (!shared(b)) return __real_pthread_barrier_destroy(b);
  return to_errno(agora_thread_barrier_destroy(reinterpret_cast<agora_thread_barrier_t *>(b)));
}

// The clock of a condition variable's timed waits (pthread_condattr_setclock)
// is kept after the agora_cond_t: zero, as the static initialiser leaves
// it, is CLOCK_REALTIME.
constexpr size_t kCondClock = sizeof(agora_cond_t);
static_assert(kCondClock + sizeof(clockid_t) <= sizeof(pthread_cond_t), "the clock fits");
static_assert(CLOCK_REALTIME == 0, "a zero-filled condition variable uses CLOCK_REALTIME");

int __wrap_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr) {
  if (!shared(c)) return __real_pthread_cond_init(c, attr);
  clockid_t clock = CLOCK_REALTIME;
  if (attr) pthread_condattr_getclock(attr, &clock);
  int status = agora_cond_init(reinterpret_cast<agora_cond_t *>(c));
  memcpy(reinterpret_cast<char *>(c) + kCondClock, &clock, sizeof clock);
  return to_errno(status);
}

// A recursive mutex is released whole while the thread waits, and its
// count given back with it.
static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, double deadline) {
  unsigned extra = 0;
  auto it = t_recursion.find(m);
  if (it != t_recursion.end()) {
    extra = it->second;
    t_recursion.erase(it);
  }
  auto *cv = reinterpret_cast<agora_cond_t *>(c);
  int status = deadline < 0 ? agora_cond_wait(cv, as_lock(m)) : agora_cond_timedwait(cv, as_lock(m), deadline);
  if (extra) t_recursion[m] = extra;
  return synchronised(to_errno(status));
}

int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  if (!shared(c)) return __real_pthread_cond_wait(c, m);
  if (!shared(m)) return EINVAL;  // a shared condition variable needs a shared mutex
  return cond_wait(c, m, -1);
}

int __wrap_pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                  const struct timespec *abstime) {
  if (!shared(c)) return __real_pthread_cond_clockwait(c, m, clock, abstime);
  if (!shared(m) || !valid_time(abstime) || !valid_clock(clock)) return EINVAL;
  return cond_wait(c, m, wtime_deadline(clock, abstime));
}

int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime) {
  if (!shared(c)) return __real_pthread_cond_timedwait(c, m, abstime);
  clockid_t clock;
  memcpy(&clock, reinterpret_cast<const char *>(c) + kCondClock, sizeof clock);
  if (!shared(m) || !valid_time(abstime) || !valid_clock(clock)) return EINVAL;
  return cond_wait(c, m, wtime_deadline(clock, abstime));
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
    stored(once, sizeof *once);
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
  return synchronised(sem_result(status, to_errno(status)));
}

int __wrap_sem_trywait(sem_t *s) {
  if (!shared(s)) return __real_sem_trywait(s);
  int status = agora_sem_trywait(reinterpret_cast<agora_sem_t *>(s));
  return sem_result(status, status == AGORA_BUSY ? EAGAIN : to_errno(status));
}

static int sem_timed(sem_t *s, clockid_t clock, const struct timespec *abstime) {
  auto *sem = reinterpret_cast<agora_sem_t *>(s);
  int status = retry_until(clock, abstime, [sem] { return agora_sem_trywait(sem); });
  return synchronised(sem_result(status, to_errno(status)));
}

int __wrap_sem_timedwait(sem_t *s, const struct timespec *abstime) {
  if (!shared(s)) return __real_sem_timedwait(s, abstime);
  return sem_timed(s, CLOCK_REALTIME, abstime);
}

int __wrap_sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime) {
  if (!shared(s)) return __real_sem_clockwait(s, clock, abstime);
  return sem_timed(s, clock, abstime);
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
