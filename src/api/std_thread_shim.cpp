// std::thread in program mode (docs/programs.md): libstdc++ starts, joins
// and detaches a std::thread inside its own compiled code
// (std::thread::_M_start_thread, join, detach in libstdc++.so), where ld
// --wrap=pthread_create does not reach, so its threads would stay on the
// calling rank. The program's objects call those three members by their
// mangled names, which agora-program.wrap wraps: a std::thread (and so
// std::jthread and std::async with launch::async, which build one) becomes
// an agora thread placed as pthread_create places one. Threads that
// libstdc++, libc or MPI start for themselves are not the program's calls
// and stay theirs.
//
// The ABI this relies on (libstdc++ since GCC 9, x86-64 Itanium C++ ABI):
// - std::thread is one std::thread::id, which is one pthread_t (the native
//   handle): the shim stores the agora handle there, the value
//   pthread_create's shim returns and pthread_self's (so get_id() and
//   std::this_thread::get_id() agree).
// - _M_start_thread(unique_ptr<_State>, void (*)()) receives the
//   unique_ptr by invisible reference (it has a non-trivial destructor):
//   the callee takes ownership by release(), the caller destroys the empty
//   shell. The _State is new'd by the thread constructor's template code,
//   which is the program's, so its operator new is wrapped and the object
//   is in global memory; its vtable is in the executable, at the same
//   address on every rank.
// - join() and detach() throw std::system_error for a thread that is not
//   joinable or that failed, and clear the id on success.
#include <errno.h>
#include <pthread.h>

#include <cstring>
#include <memory>
#include <system_error>
#include <thread>

#include "agora/agora.h"

namespace agora {
bool shim_runtime_live();  // agora_c.cpp
}  // namespace agora

using StatePtr = std::thread::_State_ptr;

// The mangled names, as the program's objects reference them.
#define START_THREAD _ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE
#define JOIN _ZNSt6thread4joinEv
#define DETACH _ZNSt6thread6detachEv
#define HARDWARE_CONCURRENCY _ZNSt6thread20hardware_concurrencyEv
#define WRAP2(name) __wrap_##name
#define REAL2(name) __real_##name
#define WRAP(name) WRAP2(name)
#define REAL(name) REAL2(name)

extern "C" {
void REAL(START_THREAD)(std::thread *self, StatePtr *state, void (*depend)());
void REAL(JOIN)(std::thread *self);
void REAL(DETACH)(std::thread *self);
unsigned REAL(HARDWARE_CONCURRENCY)();
// The pthreads shim (pthread_shim.cpp): agora threads and their handles.
int __wrap_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int __wrap_pthread_join(pthread_t, void **);
int __wrap_pthread_detach(pthread_t);
}

static_assert(sizeof(std::thread) == sizeof(pthread_t), "a std::thread is its native handle");
static_assert(std::is_standard_layout_v<std::thread::id>, "std::thread::id is a pthread_t");

namespace {

constexpr uint64_t kAgoraThread = 1ull << 48;  // agora handles are at or above this (pthread_shim.cpp)

pthread_t handle_of(const std::thread *self) {
  pthread_t h;
  std::memcpy(&h, static_cast<const void *>(self), sizeof h);
  return h;
}

void set_handle(std::thread *self, pthread_t h) { std::memcpy(static_cast<void *>(self), &h, sizeof h); }

bool runs_as_agora_thread(const std::thread *self) { return (uint64_t)handle_of(self) >= kAgoraThread; }

// The thread's body, on whichever rank it was placed: what libstdc++'s
// execute_native_thread_routine does (run, then delete the state, whose
// deleting destructor is the program's, so its operator delete is wrapped).
void *run_state(void *state) {
  StatePtr owned(static_cast<std::thread::_State *>(state));
  owned->_M_run();
  return nullptr;
}

}  // namespace

extern "C" {

void WRAP(START_THREAD)(std::thread *self, StatePtr *state, void (*depend)()) {
  // Before Agora runs (a constructor of priority < 102), or with a state
  // outside global memory, that other ranks could not read: libstdc++'s own
  // thread, on this rank.
  if (!agora::shim_runtime_live() || !agora_is_global(state->get())) return REAL(START_THREAD)(self, state, depend);
  pthread_t h;
  if (int err = __wrap_pthread_create(&h, nullptr, run_state, state->get())) std::__throw_system_error(err);
  set_handle(self, h);
  (void)state->release();  // the thread owns it now
}

void WRAP(JOIN)(std::thread *self) {
  if (!runs_as_agora_thread(self)) return REAL(JOIN)(self);
  if (int err = __wrap_pthread_join(handle_of(self), nullptr)) std::__throw_system_error(err);
  set_handle(self, pthread_t{});
}

void WRAP(DETACH)(std::thread *self) {
  if (!runs_as_agora_thread(self)) return REAL(DETACH)(self);
  if (int err = __wrap_pthread_detach(handle_of(self))) std::__throw_system_error(err);
  set_handle(self, pthread_t{});
}

// The job's thread slots, as sysconf(_SC_NPROCESSORS_ONLN) answers in
// program mode (libstdc++ asks get_nprocs inside its own code).
unsigned WRAP(HARDWARE_CONCURRENCY)() {
  if (!agora::shim_runtime_live()) return REAL(HARDWARE_CONCURRENCY)();
  return (unsigned)agora_thread_slots();
}

}  // extern "C"
