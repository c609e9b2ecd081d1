// Process-wide state and helpers shared by the runtime_*.cpp files of one
// rank's runtime; not part of the Runtime class because signal handlers,
// at-exit and fork hooks, and thread-locals reach them without a Runtime.
// Internal to src/runtime: nothing outside includes this.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/message.h"

namespace agora {

class Runtime;
class MpiTransport;

namespace runtime_internal {

// ---- the fault path (runtime_faults.cpp) ----
// The runtime the SIGSEGV handler serves; null before init and after stop.
extern Runtime *g_fault_target;
// Set first thing in the child of fork(), which is not a rank.
extern std::atomic<bool> g_forked_child;
bool fault_trampoline(void *addr, bool is_write);  // the handler's entry
bool io_range_usable(uintptr_t addr, size_t len);  // system calls on global memory
void on_fork_child();                              // fork()'s child hook

// ---- waiting (runtime_wait.cpp) ----
// Threads woken from a sleeping wait that have not run yet (the service
// thread holds back for them, see service_loop).
extern std::atomic<int> g_woken_not_resumed;
void wake_sleeper(std::atomic<uint32_t> *state);  // the Waiter wake hook

// ---- locks (runtime_locks.cpp) ----
// Locks are held by threads; this names the calling thread within the rank.
uint64_t this_thread_token();

// ---- fork-join threads (runtime_threads.cpp) ----
// The agora thread running on this OS thread (id 0: not one, e.g. main).
extern thread_local Rank tl_thread_rank;
extern thread_local uint64_t tl_thread_id;

// ---- statistics (runtime_stats.cpp) ----
// Collective: false (with *error) on every rank if rank 0 cannot write
// AGORA_STATS_JSON's file.
bool stats_json_path_usable(const std::string &path, Rank rank, MpiTransport &transport, std::string *error);

}  // namespace runtime_internal
}  // namespace agora
