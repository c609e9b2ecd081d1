// std::condition_variable in program mode (docs/programs.md): its wait,
// notify_one, notify_all and destructor are compiled into libstdc++.so,
// whose pthread_cond_* calls ld --wrap does not reach, so they would run
// libc's condition variable on a std::mutex that is an Agora lock, among
// one rank's threads only. The program's objects call these members by
// their mangled names, which agora-program.wrap wraps, and they become the
// pthreads shim's calls (an Agora condition variable named by the object's
// address, pthread_shim.cpp). Its timed waits (wait_for, wait_until) are
// inline in the header and reach pthread_cond_clockwait's wrap already; its
// constructor only zero-fills, which is the static initialiser the shim
// accepts.
//
// The ABI this relies on (libstdc++ since GCC 11): a condition_variable is
// one pthread_cond_t; a unique_lock<mutex> is (mutex *, bool), and a
// std::mutex is one pthread_mutex_t.
#include <pthread.h>
#include <string.h>

#include <condition_variable>
#include <mutex>

#include "common/log.h"

#define WAIT _ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE
#define NOTIFY_ONE _ZNSt18condition_variable10notify_oneEv
#define NOTIFY_ALL _ZNSt18condition_variable10notify_allEv
#define DESTROY1 _ZNSt18condition_variableD1Ev
#define DESTROY2 _ZNSt18condition_variableD2Ev
#define WRAP2(name) __wrap_##name
#define WRAP(name) WRAP2(name)

extern "C" {
int __wrap_pthread_cond_wait(pthread_cond_t *, pthread_mutex_t *);
int __wrap_pthread_cond_signal(pthread_cond_t *);
int __wrap_pthread_cond_broadcast(pthread_cond_t *);
int __wrap_pthread_cond_destroy(pthread_cond_t *);
}

static_assert(sizeof(std::condition_variable) == sizeof(pthread_cond_t), "a condition_variable is a pthread_cond_t");
static_assert(sizeof(std::mutex) == sizeof(pthread_mutex_t), "a std::mutex is a pthread_mutex_t");

namespace {

pthread_cond_t *native(std::condition_variable *cv) { return reinterpret_cast<pthread_cond_t *>(cv); }

// The standard's wait throws nothing: a failure (a condition variable in
// global memory with a mutex outside it, say) ends the job with its cause.
void check(int err, const char *call) {
  if (err) agora::fatal("std::condition_variable::%s: %s", call, strerror(err));
}

}  // namespace

extern "C" {

void WRAP(WAIT)(std::condition_variable *cv, std::unique_lock<std::mutex> *lock) {
  check(__wrap_pthread_cond_wait(native(cv), lock->mutex()->native_handle()), "wait");
}

void WRAP(NOTIFY_ONE)(std::condition_variable *cv) { check(__wrap_pthread_cond_signal(native(cv)), "notify_one"); }

void WRAP(NOTIFY_ALL)(std::condition_variable *cv) { check(__wrap_pthread_cond_broadcast(native(cv)), "notify_all"); }

// libc's pthread_cond_destroy on an Agora condition variable's bytes would
// read them as libc's waiter count (and may wait for waiters that are not).
void WRAP(DESTROY1)(std::condition_variable *cv) { __wrap_pthread_cond_destroy(native(cv)); }
void WRAP(DESTROY2)(std::condition_variable *cv) { __wrap_pthread_cond_destroy(native(cv)); }

}  // extern "C"
