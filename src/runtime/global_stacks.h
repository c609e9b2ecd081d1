// Bodies of agora threads (and, in program mode, main): where they run and
// how they end early.
//
// In program mode a body runs on a stack in global memory homed on its
// rank (AGORA_STACK bytes, a guard below it), so that pointers to its
// locals mean the same on every rank. The runtime itself must never run on
// such a stack: the protocol may take any of its pages away (sc: a remote
// read downgrades the home's copy; hlrc: the home write-protects pages at
// interval boundaries), and a fault taken while the runtime holds its lock
// would deadlock, or the service thread would write a Waiter on a page it
// cannot. So the body's thread keeps its private stack: signal handlers run
// on a private alternate stack, and API entry points run the runtime on the
// part of the thread's own stack below where it switched (see
// api/private_stack.h).
#pragma once
#include <cstdint>

namespace agora {

// Is the calling thread running on a stack in global memory now?
bool on_global_stack();
// Where the runtime may run on this thread's private stack (valid when
// on_global_stack()).
uintptr_t private_stack_top();
// Is the calling thread inside a body (an agora thread, or main in program
// mode), so that agora_thread_exit can end it?
bool in_body();
// Ends the current body as if it returned ret (in_body() must hold). Frames
// between are abandoned: C++ destructors in them do not run.
[[noreturn]] void body_exit(void *ret);
// Runs before every body on this process (program mode: the rank takes the
// job's process attributes, program_process_attrs.cpp), on the thread's
// private stack. Set before threads start.
void set_body_prologue(void (*prologue)());

// Called on a body's own thread when the body ends (its function returned,
// or agora_thread_exit), before the thread counts as ended, so that a join
// returns after it: the program's thread-specific data destructors
// (api/thread_keys.cpp), which set it when a key first gets one. `exited`:
// ended by agora_thread_exit. It runs on the thread's private stack, still
// inside the body (in_body()): an agora_thread_exit in it ends the hook,
// not the body again.
using BodyEndHook = void (*)(bool exited);
void set_body_end_hook(BodyEndHook hook);

}  // namespace agora
