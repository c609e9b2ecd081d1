// C++ operator new and delete of a program built with agoracxx: like its
// malloc (program_start.c), the program's own `new` allocates global memory
// homed on the calling rank, so a std::vector or a node a thread allocates
// can be handed to a thread on another rank. `ld --wrap` renames only the
// program's references (agora-program.wrap); libstdc++'s own allocations,
// and Agora's (this library is not linked with --wrap), keep the real
// operators. A delete of memory that is not global memory goes to the real
// operator (an object libstdc++ allocated before Agora started).
#include <cstddef>
#include <new>

#include "program/program_abi.h"

namespace {
constexpr std::size_t kDefaultAlign = __STDCPP_DEFAULT_NEW_ALIGNMENT__;

void *allocate(std::size_t n, std::size_t align) {
  return align > kDefaultAlign ? agora_program_memalign(align, n) : agora_program_malloc(n);
}

// operator new's contract: retry through the new-handler, then throw.
void *allocate_or_throw(std::size_t n, std::size_t align) {
  for (;;) {
    if (void *p = allocate(n, align)) return p;
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}
}  // namespace

extern "C" {
void *__real__Znwm(std::size_t);
void *__real__Znam(std::size_t);
void *__real__ZnwmRKSt9nothrow_t(std::size_t, const std::nothrow_t &) noexcept;
void *__real__ZnamRKSt9nothrow_t(std::size_t, const std::nothrow_t &) noexcept;
void *__real__ZnwmSt11align_val_t(std::size_t, std::align_val_t);
void *__real__ZnamSt11align_val_t(std::size_t, std::align_val_t);
void __real__ZdlPv(void *) noexcept;
void __real__ZdaPv(void *) noexcept;
void __real__ZdlPvSt11align_val_t(void *, std::align_val_t) noexcept;
void __real__ZdaPvSt11align_val_t(void *, std::align_val_t) noexcept;

// new / new[]
void *__wrap__Znwm(std::size_t n) {
  return agora_program_heap_active() ? allocate_or_throw(n, kDefaultAlign) : __real__Znwm(n);
}
void *__wrap__Znam(std::size_t n) {
  return agora_program_heap_active() ? allocate_or_throw(n, kDefaultAlign) : __real__Znam(n);
}
void *__wrap__ZnwmRKSt9nothrow_t(std::size_t n, const std::nothrow_t &t) noexcept {
  return agora_program_heap_active() ? allocate(n, kDefaultAlign) : __real__ZnwmRKSt9nothrow_t(n, t);
}
void *__wrap__ZnamRKSt9nothrow_t(std::size_t n, const std::nothrow_t &t) noexcept {
  return agora_program_heap_active() ? allocate(n, kDefaultAlign) : __real__ZnamRKSt9nothrow_t(n, t);
}
void *__wrap__ZnwmSt11align_val_t(std::size_t n, std::align_val_t a) {
  return agora_program_heap_active() ? allocate_or_throw(n, (std::size_t)a) : __real__ZnwmSt11align_val_t(n, a);
}
void *__wrap__ZnamSt11align_val_t(std::size_t n, std::align_val_t a) {
  return agora_program_heap_active() ? allocate_or_throw(n, (std::size_t)a) : __real__ZnamSt11align_val_t(n, a);
}
void *__wrap__ZnwmSt11align_val_tRKSt9nothrow_t(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
  if (agora_program_heap_active()) return allocate(n, (std::size_t)a);
  try {
    return __real__ZnwmSt11align_val_t(n, a);
  } catch (...) {
    return nullptr;
  }
}
void *__wrap__ZnamSt11align_val_tRKSt9nothrow_t(std::size_t n, std::align_val_t a, const std::nothrow_t &t) noexcept {
  return __wrap__ZnwmSt11align_val_tRKSt9nothrow_t(n, a, t);
}

// delete / delete[], with and without size, alignment, nothrow
void __wrap__ZdlPv(void *p) noexcept {
  if (agora_program_heap_owns(p))
    agora_program_free(p);
  else
    __real__ZdlPv(p);
}
void __wrap__ZdaPv(void *p) noexcept {
  if (agora_program_heap_owns(p))
    agora_program_free(p);
  else
    __real__ZdaPv(p);
}
void __wrap__ZdlPvm(void *p, std::size_t) noexcept { __wrap__ZdlPv(p); }
void __wrap__ZdaPvm(void *p, std::size_t) noexcept { __wrap__ZdaPv(p); }
void __wrap__ZdlPvRKSt9nothrow_t(void *p, const std::nothrow_t &) noexcept { __wrap__ZdlPv(p); }
void __wrap__ZdaPvRKSt9nothrow_t(void *p, const std::nothrow_t &) noexcept { __wrap__ZdaPv(p); }
void __wrap__ZdlPvSt11align_val_t(void *p, std::align_val_t a) noexcept {
  if (agora_program_heap_owns(p))
    agora_program_free(p);
  else
    __real__ZdlPvSt11align_val_t(p, a);
}
void __wrap__ZdaPvSt11align_val_t(void *p, std::align_val_t a) noexcept {
  if (agora_program_heap_owns(p))
    agora_program_free(p);
  else
    __real__ZdaPvSt11align_val_t(p, a);
}
void __wrap__ZdlPvmSt11align_val_t(void *p, std::size_t, std::align_val_t a) noexcept {
  __wrap__ZdlPvSt11align_val_t(p, a);
}
void __wrap__ZdaPvmSt11align_val_t(void *p, std::size_t, std::align_val_t a) noexcept {
  __wrap__ZdaPvSt11align_val_t(p, a);
}
void __wrap__ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, std::align_val_t a, const std::nothrow_t &) noexcept {
  __wrap__ZdlPvSt11align_val_t(p, a);
}
void __wrap__ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, std::align_val_t a, const std::nothrow_t &) noexcept {
  __wrap__ZdaPvSt11align_val_t(p, a);
}
}  // extern "C"
