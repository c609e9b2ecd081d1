// Internal to src/platform: the program's SIGSEGV action while Agora's
// handler is installed. The interposed sigaction/signal (signal_interpose.cpp)
// read and write it instead of the kernel's; the fault handler
// (fault_handler.cpp) calls it for every fault that is not Agora's.
#pragma once
#include <csignal>

namespace agora::platform::chain {

// libc's own sigaction, bypassing the interposer.
int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

// True while Agora's SIGSEGV handler is installed.
bool active();
// The action the program believes SIGSEGV has (what the kernel would hold
// without Agora). Safe to call from the signal handler.
struct sigaction program_action();
void set_program_action(const struct sigaction &act);
// Installs *act (if given) and returns the action it replaces, atomically.
struct sigaction exchange_program_action(const struct sigaction *act);

}  // namespace agora::platform::chain
