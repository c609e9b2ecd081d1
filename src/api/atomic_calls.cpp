// The atomic entry points of program mode (docs/atomics.md). agoracc
// compiles the program with gcc's -fno-inline-atomics (and
// include/agora/program_atomics.h for the __sync and atomic_flag builtins),
// so every atomic operation of the program's own code is a call to
// libatomic's ABI (__atomic_fetch_add_4, __atomic_compare_exchange_8,
// __atomic_load, ...); agora-program.wrap sends those calls here.
//
// An object outside global memory (or any call while Agora is not running,
// or under sc, whose pages make the hardware's instructions atomic across
// ranks) gets the hardware atomic: the builtins below are inlined in Agora's
// own code, and sizes the hardware cannot do go to libatomic, as they would
// without Agora. An object in global memory goes to the atomic service
// (sync/atomic_service.h) on the thread's private stack.
#include <fenv.h>

#include <cstddef>
#include <cstdint>

#include "api/private_stack.h"
#include "common/log.h"
#include "runtime/runtime.h"

namespace agora {
Runtime *api_runtime();

namespace {
thread_local AtomicSpin t_spin;

Runtime *service_for(const volatile void *p) {
  Runtime *rt = api_runtime();
  if (!rt || !rt->space().contains((uintptr_t)p) || rt->atomics_in_hardware() || Runtime::in_forked_child())
    return nullptr;
  return rt;
}

const char *op_name(AtomicOp op) {
  static const char *const names[] = {"load",      "store",     "exchange", "compare_exchange", "fetch_add",
                                      "fetch_sub", "fetch_and", "fetch_or", "fetch_xor",        "fetch_nand"};
  return names[(int)op];
}

int serve(Runtime *rt, const AtomicCall &c, bool *exchanged) {
  AGORA_ON_PRIVATE_STACK(serve(rt, c, exchanged));
  int status = rt->atomic(c, exchanged);
  if (status != 0)
    fatal("atomic %s of %u bytes at %p: the word's lock failed (status %d)", op_name(c.op), c.size, (void *)c.address,
          status);
  if (c.op == AtomicOp::Load) {
    if (uint32_t nap = t_spin.after_load(c.address, c.old, c.size)) platform::sleep_us(nap);
  } else {
    t_spin.after_update(c.address);
  }
  return status;
}

// The call on `size` bytes at p; the caller points it at its buffers.
AtomicCall call_on(const volatile void *p, size_t size, AtomicOp op) {
  AtomicCall c;
  c.address = (uintptr_t)p;
  c.size = (uint32_t)size;
  c.op = op;
  return c;
}

// A compare-exchange through the service: whether it stored.
bool serve_compare_exchange(Runtime *rt, const volatile void *p, size_t size, void *expected, const void *desired) {
  AtomicCall c = call_on(p, size, AtomicOp::CompareExchange);
  c.operand = desired;
  c.expected = expected;
  bool exchanged = false;
  serve(rt, c, &exchanged);
  return exchanged;
}

// The service's result for one sized call.
template <typename T>
T sized(Runtime *rt, const volatile void *p, AtomicOp op, T operand, bool fetch_new = false) {
  T old{}, updated{};
  AtomicCall c = call_on(p, sizeof(T), op);
  c.operand = &operand;
  c.old = &old;
  c.updated = &updated;
  serve(rt, c, nullptr);
  return fetch_new ? updated : old;
}
}  // namespace
}  // namespace agora

using agora::AtomicCall;
using agora::AtomicOp;
using agora::call_on;
using agora::serve_compare_exchange;
using agora::service_for;
using agora::sized;

typedef unsigned __int128 agora_u128;

// libatomic's generic functions: the builtins of the same names take other
// arguments, so they are reached by their symbols.
extern "C" void libatomic_load(size_t, void *, void *, int) __asm__("__atomic_load");
extern "C" void libatomic_store(size_t, void *, void *, int) __asm__("__atomic_store");
extern "C" void libatomic_exchange(size_t, void *, void *, void *, int) __asm__("__atomic_exchange");
extern "C" bool libatomic_compare_exchange(size_t, void *, void *, void *, int,
                                           int) __asm__("__atomic_compare_exchange");
extern "C" bool libatomic_is_lock_free(size_t, const volatile void *) __asm__("__atomic_is_lock_free");

// Memory orders arrive as ints the compiler could not see: the hardware
// path treats them as seq_cst, which every order allows.
#define AGORA_ATOMIC_SIZED(N, T)                                                                                  \
  extern "C" T __wrap___atomic_load_##N(const volatile void *p, int order) {                                      \
    if (agora::Runtime *rt = service_for(p)) return sized<T>(rt, p, AtomicOp::Load, 0);                           \
    return __atomic_load_n((const volatile T *)p, order);                                                         \
  }                                                                                                               \
  extern "C" void __wrap___atomic_store_##N(volatile void *p, T v, int order) {                                   \
    if (agora::Runtime *rt = service_for(p)) {                                                                    \
      sized<T>(rt, p, AtomicOp::Store, v);                                                                        \
      return;                                                                                                     \
    }                                                                                                             \
    __atomic_store_n((volatile T *)p, v, order);                                                                  \
  }                                                                                                               \
  extern "C" T __wrap___atomic_exchange_##N(volatile void *p, T v, int order) {                                   \
    if (agora::Runtime *rt = service_for(p)) return sized<T>(rt, p, AtomicOp::Exchange, v);                       \
    return __atomic_exchange_n((volatile T *)p, v, order);                                                        \
  }                                                                                                               \
  extern "C" bool __wrap___atomic_compare_exchange_##N(volatile void *p, void *expected, T desired, int success,  \
                                                       int failure) {                                             \
    if (agora::Runtime *rt = service_for(p)) return serve_compare_exchange(rt, p, sizeof(T), expected, &desired); \
    return __atomic_compare_exchange_n((volatile T *)p, (T *)expected, desired, false, success, failure);         \
  }                                                                                                               \
  AGORA_ATOMIC_ARITH(N, T, add, Add)                                                                              \
  AGORA_ATOMIC_ARITH(N, T, sub, Sub)                                                                              \
  AGORA_ATOMIC_ARITH(N, T, and, And)                                                                              \
  AGORA_ATOMIC_ARITH(N, T, or, Or)                                                                                \
  AGORA_ATOMIC_ARITH(N, T, xor, Xor)                                                                              \
  AGORA_ATOMIC_ARITH(N, T, nand, Nand)

#define AGORA_ATOMIC_ARITH(N, T, name, OP)                                                  \
  extern "C" T __wrap___atomic_fetch_##name##_##N(volatile void *p, T v, int order) {       \
    if (agora::Runtime *rt = service_for(p)) return sized<T>(rt, p, AtomicOp::OP, v);       \
    return __atomic_fetch_##name((volatile T *)p, v, order);                                \
  }                                                                                         \
  extern "C" T __wrap___atomic_##name##_fetch_##N(volatile void *p, T v, int order) {       \
    if (agora::Runtime *rt = service_for(p)) return sized<T>(rt, p, AtomicOp::OP, v, true); \
    return __atomic_##name##_fetch((volatile T *)p, v, order);                              \
  }

AGORA_ATOMIC_SIZED(1, uint8_t)
AGORA_ATOMIC_SIZED(2, uint16_t)
AGORA_ATOMIC_SIZED(4, uint32_t)
AGORA_ATOMIC_SIZED(8, uint64_t)
AGORA_ATOMIC_SIZED(16, agora_u128)

// The generic forms, for objects of other sizes (a struct in std::atomic).
extern "C" void __wrap___atomic_load(size_t size, void *p, void *ret, int order) {
  if (agora::Runtime *rt = service_for(p)) {
    AtomicCall c = call_on(p, size, AtomicOp::Load);
    c.old = ret;
    agora::serve(rt, c, nullptr);
    return;
  }
  libatomic_load(size, p, ret, order);
}

extern "C" void __wrap___atomic_store(size_t size, void *p, void *value, int order) {
  if (agora::Runtime *rt = service_for(p)) {
    AtomicCall c = call_on(p, size, AtomicOp::Store);
    c.operand = value;
    agora::serve(rt, c, nullptr);
    return;
  }
  libatomic_store(size, p, value, order);
}

extern "C" void __wrap___atomic_exchange(size_t size, void *p, void *value, void *ret, int order) {
  if (agora::Runtime *rt = service_for(p)) {
    AtomicCall c = call_on(p, size, AtomicOp::Exchange);
    c.operand = value;
    c.old = ret;
    agora::serve(rt, c, nullptr);
    return;
  }
  libatomic_exchange(size, p, value, ret, order);
}

extern "C" bool __wrap___atomic_compare_exchange(size_t size, void *p, void *expected, void *desired, int success,
                                                 int failure) {
  if (agora::Runtime *rt = service_for(p)) return serve_compare_exchange(rt, p, size, expected, desired);
  return libatomic_compare_exchange(size, p, expected, desired, success, failure);
}

// Compound assignment on an _Atomic floating object raises the exceptions
// of its last attempt through this (libatomic's).
extern "C" void __wrap___atomic_feraiseexcept(int excepts) { feraiseexcept(excepts); }

// Whether an object of `size` bytes at p is lock-free in hardware: the
// hardware's answer (the service's own word lock is Agora's business).
extern "C" bool __wrap___atomic_is_lock_free(size_t size, const volatile void *p) {
  return libatomic_is_lock_free(size, p);
}
