// The only layer that calls the operating system directly.
//
// Contract:
//  - vm_*: the global range is one shared-memory object mapped twice: the
//    *application view* at a fixed address, identical in every rank, whose
//    protection follows the coherence state of each page; and the *service
//    view*, always readable and writable, through which the runtime installs
//    and reads page contents without racing the application's protection.
//  - fault_*: a SIGSEGV handler that passes faults inside the global range to
//    one callback and treats every other fault exactly as the program would
//    without Agora (previous handler, else default action: the process dies).
//  - code_ref_*: a function pointer of one program, as (module, offset), so
//    that it means the same function in another process of the same
//    program even though ASLR loads each module at a different address.
//  - everything returns false/negative on failure and leaves errno set.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/types.h"

namespace agora::platform {

constexpr size_t kPageSize = 4096;

struct GlobalRange {
  std::byte *app_view = nullptr;      // fixed address, protection per page
  std::byte *service_view = nullptr;  // same memory, always read-write
  size_t size = 0;
  int fd = -1;
};

// Reserves [base, base+size) in this process (fails, rather than replacing
// anything, if the range is already in use). All pages start inaccessible in
// the application view.
bool vm_reserve(uintptr_t base, size_t size, GlobalRange *out, std::string *error);
void vm_release(GlobalRange *range);
// Sets the application-view protection of [addr, addr+len).
bool vm_protect(void *addr, size_t len, Access access);

// Called with the faulting address; returns true if it made the access
// possible (the instruction is retried), false if the fault is not ours.
using FaultCallback = bool (*)(void *addr, bool is_write);
bool fault_handler_install(FaultCallback callback, uintptr_t lo, uintptr_t hi);
void fault_handler_uninstall();
// A thread started while its creator was inside the fault handler (a
// faulting thread handles messages while it waits) inherits SIGSEGV
// blocked, and its first fault would kill the process: threads the runtime
// starts call this first.
void fault_signal_unblock();

// Doorbell: lets a process on the same host wake a napping thread of
// another. The waiting thread calls doorbell_block() once, then naps in
// doorbell_wait(); others ring it by (process id, thread id).
void doorbell_block();
bool doorbell_wait(uint32_t us);  // naps up to us; true if rung
void doorbell_ring(int pid, int tid);
// Futex on a word private to this process: futex_wait sleeps while *word ==
// expected (returns at once if it differs; may return spuriously), futex_wake
// wakes every thread sleeping on word.
void futex_wait(std::atomic<uint32_t> *word, uint32_t expected);
void futex_wake(std::atomic<uint32_t> *word);
// The CPUs this thread may run on (sched_getaffinity), one bit per CPU
// number; false (errno set) if the kernel will not say.
bool cpu_affinity(std::vector<uint64_t> *mask);
int process_id();
int thread_id();
std::string host_name();

// Function pointers across ranks: module is "" for the executable, else the
// shared library's path as loaded; offset is from the module's load base.
// Both fail (with a message in *error) unless the address is in an
// executable segment of a loaded module.
bool code_ref_from_address(const void *fn, std::string *module, uint64_t *offset,
                           std::string *error);
void *code_ref_to_address(const std::string &module, uint64_t offset, std::string *error);

double now_seconds();          // monotonic
void sleep_us(uint32_t us);    // nanosleep
void thread_yield();
void thread_reduce_timer_slack();  // finer nanosleep wake-ups for the calling thread
inline void cpu_relax() { __builtin_ia32_pause(); }

}  // namespace agora::platform
