// call_on_stack for aarch64 (AAPCS64): the contract of
// call_on_stack_x86_64.cpp. Runs fn(arg) with the stack pointer at
// stack_top (rounded down to 16 bytes, as AAPCS64 requires of sp), then
// returns fn's result on the caller's stack.
//
// The frame record (x29, x30) stays on the caller's stack and x29 points at
// it while fn runs; the CFI describes the frame from x29, so debuggers and
// unwinders walk from the new stack back to the old.
#if !defined(__aarch64__)
#error \
    "call_on_stack_aarch64.cpp is for aarch64; src/CMakeLists.txt picks call_on_stack_<arch>.cpp by CMAKE_SYSTEM_PROCESSOR"
#endif

// extern "C" void *agora_platform_call_on_stack(void *(*fn)(void *), void *arg, void *stack_top)
//   x0 = fn, x1 = arg, x2 = stack_top; result in x0.
// "hint #34" is BTI c (a no-op before Armv8.5): a valid target for an
// indirect call where branch protection is on.
asm(R"(
    .text
    .p2align 4
    .globl agora_platform_call_on_stack
    .hidden agora_platform_call_on_stack
    .type agora_platform_call_on_stack, %function
agora_platform_call_on_stack:
    .cfi_startproc
    hint #34
    stp x29, x30, [sp, #-16]!
    .cfi_def_cfa_offset 16
    .cfi_offset x29, -16
    .cfi_offset x30, -8
    mov x29, sp
    .cfi_def_cfa_register x29
    and x2, x2, #-16
    mov sp, x2
    mov x3, x0
    mov x0, x1
    blr x3
    mov sp, x29
    .cfi_def_cfa_register sp
    ldp x29, x30, [sp], #16
    .cfi_def_cfa_offset 0
    .cfi_restore x29
    .cfi_restore x30
    ret
    .cfi_endproc
    .size agora_platform_call_on_stack, .-agora_platform_call_on_stack
)");
