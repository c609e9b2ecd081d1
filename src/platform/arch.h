// What differs between CPU architectures, and nothing else: the spin-wait
// hint, reading the stack pointer, and (fault_access_linux.cpp) whether a
// page fault was a write. call_on_stack has one assembly file per
// architecture (call_on_stack_<arch>.cpp, chosen by src/CMakeLists.txt).
//
// Supported: x86-64 and aarch64 (64-bit ARM), on Linux. Porting to another
// architecture means filling in each function below, fault_is_write, and a
// call_on_stack_<arch>.cpp; the #errors name them.
#pragma once
#include <cstdint>

#if !defined(__x86_64__) && !defined(__aarch64__)
#error \
    "Agora supports x86-64 and aarch64: port src/platform/arch.h (cpu_relax, stack_pointer_exact), fault_is_write in src/platform/fault_access_linux.cpp and src/platform/call_on_stack_<arch>.cpp"
#endif

namespace agora::platform {

// The body of a spin-wait loop: lets a sibling hardware thread run.
inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// The stack pointer register itself (stack_pointer() in platform.h is the
// frame address: near enough, and free of assembly).
inline uintptr_t stack_pointer_exact() {
  uintptr_t sp;
#if defined(__x86_64__)
  asm volatile("movq %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
  asm volatile("mov %0, sp" : "=r"(sp));
#endif
  return sp;
}

// Whether the SIGSEGV described by `ucontext` (a SA_SIGINFO handler's third
// argument) was raised by a store. Callable from the signal handler.
bool fault_is_write(const void *ucontext);

#if defined(__aarch64__)
// aarch64: the syndrome (ESR_EL1) the kernel records in the frame's
// esr_context record; false if the frame has none (qemu-user gives none).
bool fault_syndrome(const void *ucontext, uint64_t *esr);
#endif

}  // namespace agora::platform
