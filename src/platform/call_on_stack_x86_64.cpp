// call_on_stack: runs fn(arg) with the stack pointer at stack_top, then
// returns on the caller's stack. Program mode uses it twice: to run main and
// agora threads on stacks in global memory, and to run the runtime back on
// the thread's private stack when such a thread calls into Agora (the
// runtime must never touch a page the protocol may take away while it holds
// its lock: see docs/programs.md).
//
// The frame keeps the caller's stack pointer in %rbp and describes it with
// CFI, so debuggers and unwinders walk from the new stack back to the old.
#if !defined(__x86_64__)
#error \
    "call_on_stack_x86_64.cpp is for x86-64; src/CMakeLists.txt picks call_on_stack_<arch>.cpp by CMAKE_SYSTEM_PROCESSOR"
#endif

// extern "C" void *agora_platform_call_on_stack(void *(*fn)(void *), void *arg, void *stack_top)
asm(R"(
    .text
    .p2align 4
    .globl agora_platform_call_on_stack
    .hidden agora_platform_call_on_stack
    .type agora_platform_call_on_stack, @function
agora_platform_call_on_stack:
    .cfi_startproc
    pushq %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq %rsp, %rbp
    .cfi_def_cfa_register %rbp
    andq $-16, %rdx
    movq %rdx, %rsp
    movq %rdi, %rax
    movq %rsi, %rdi
    callq *%rax
    movq %rbp, %rsp
    popq %rbp
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size agora_platform_call_on_stack, .-agora_platform_call_on_stack
)");
