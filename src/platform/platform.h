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
//    While it is installed, the program's sigaction/signal calls for SIGSEGV
//    are interposed: they set the handler next in the chain and report the
//    program's own previous action (signal_interpose.cpp).
//  - code_ref_*: a function pointer of one program, as (module, offset), so
//    that it means the same function in another process of the same
//    program even though ASLR loads each module at a different address.
//  - global_io_*: read, write, recv, fread, ... on global memory (see
//    global_io.cpp, linked into every program rather than archived, so that
//    its definitions replace libc's for the program).
//  - fork_*: a child made by fork() does not share the global range.
//  - everything returns false/negative on failure and leaves errno set.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/log.h"  // human_bytes
#include "common/types.h"
#include "platform/arch.h"        // cpu_relax, stack_pointer_exact, fault_is_write
#include "platform/ipv4_route.h"  // Ipv4Interface

namespace agora::platform {

constexpr size_t kPageSize = 4096;

struct GlobalRange {
  std::byte *app_view = nullptr;      // fixed address, protection per page
  std::byte *service_view = nullptr;  // same memory, always read-write
  size_t size = 0;
  size_t extra = 0;  // service view beyond size (vm_grow)
  int fd = -1;
};

// Reserves [base, base+size) in this process (fails, rather than replacing
// anything, if the range is already in use). All pages start inaccessible in
// the application view.
bool vm_reserve(uintptr_t base, size_t size, GlobalRange *out, std::string *error);
void vm_release(GlobalRange *range);
// Program mode (address_layout_linux.cpp): restarts the process (execv of
// itself, before MPI starts) without address-space randomisation unless it
// already runs so or AGORA_ASLR=keep, so that every rank loads libc and the
// other libraries at the same addresses. Returns if no restart was needed
// or possible.
void same_address_layout(char **argv);

// Program mode (program_vm_linux.cpp). Grows the memory object by `bytes`
// after the range (the service view grows with it and may move), for pages
// that live elsewhere in the application's address space.
bool vm_grow(GlobalRange *range, size_t bytes, std::string *error);
// Maps the memory object at file offset `offset` over [addr, addr+len)
// (page aligned, replacing what is there) with no access: the window's
// protection then follows the protocol like the range's.
bool vm_map_window(const GlobalRange &range, uintptr_t addr, size_t len, uint64_t offset, std::string *error);
// A private stack for signal handlers on the calling thread (sigaltstack),
// so that the fault handler never runs on a stack in global memory;
// alt_signal_stack_remove frees it. Handlers are installed with SA_ONSTACK.
bool alt_signal_stack_install(size_t bytes, std::string *error);
void alt_signal_stack_remove();
// Runs fn(arg) on the stack whose top (highest address) is stack_top and
// returns its result on the caller's stack (call_on_stack_<arch>.cpp).
extern "C" void *agora_platform_call_on_stack(void *(*fn)(void *), void *arg, void *stack_top);
inline void *call_on_stack(void *(*fn)(void *), void *arg, void *stack_top) {
  return agora_platform_call_on_stack(fn, arg, stack_top);
}
// The current stack pointer (near enough: the caller's frame).
inline uintptr_t stack_pointer() { return (uintptr_t)__builtin_frame_address(0); }

// What bounds the global range in this process (vm_room_linux.cpp).
struct VmRoom {
  uint64_t app_free = 0;       // bytes free from the base up to the next mapping
  uintptr_t app_limit = 0;     // where that mapping starts
  std::string app_limit_name;  // what it is ("[heap]", a path, ...)
  uint64_t other_gap = 0;      // the largest other free gap (for the service view)
  uintptr_t other_lo = 0, other_hi = 0;
  uint64_t as_limit = UINT64_MAX;    // ulimit -v
  uint64_t file_limit = UINT64_MAX;  // ulimit -f: the memory file's size
  uint64_t mapped = 0;               // address space in use now
  uint64_t largest = 0;              // the largest range vm_reserve can map now
};
bool vm_room(uintptr_t base, VmRoom *out);
// Why a range of `size` at `base` cannot be mapped, naming the limit and
// what to do, or "" if it fits.
std::string vm_room_shortfall(uintptr_t base, uint64_t size, const VmRoom &room);
using agora::human_bytes;  // "16.0 TiB" (common/log.h)
// Sets the application-view protection of [addr, addr+len).
bool vm_protect(void *addr, size_t len, Access access);
// Zeroes [offset, offset+len) of the range in both views and gives its
// memory back to the system (vm_discard_linux.cpp).
bool vm_discard(const GlobalRange &range, size_t offset, size_t len);
// Maps [addr, addr+len) in at once (allocating what was discarded), for
// reading or for writing as its protection allows, instead of one kernel
// fault per page at first touch. Only a hint: false if the kernel cannot.
bool vm_populate(void *addr, size_t len, bool write);

// The bounded cache's frames (frame_pool_linux.cpp, docs/cache.md): a second
// memory object of `slots` pages whose memory stays allocated. A copy of a
// remote page lives in a slot mapped over the page's place in the
// application view, so an eviction and the next copy reuse memory instead
// of giving it back and having the kernel allocate and zero it again.
struct FramePool {
  std::byte *view = nullptr;  // every slot, always read-write (the frames)
  size_t slots = 0;
  size_t page = 0;
  int fd = -1;
};
bool frame_pool_open(size_t slots, size_t page, FramePool *out, std::string *error);
void frame_pool_close(FramePool *pool);
// Maps slots [first_slot, first_slot+count) over [addr, addr+count*page)
// with `access`; kept out of fork() children like the views.
bool frame_pool_map(const FramePool &pool, void *addr, size_t first_slot, size_t count, Access access);
// Maps the range's memory object back over [addr, addr+len) at `offset`,
// with no access and the flags it had (the reserved range's, or a program
// window's), in place of pool slots.
bool vm_map_back(const GlobalRange &range, void *addr, size_t len, uint64_t offset);
// The most memory mappings a process may have (Linux: vm.max_map_count;
// every stretch of pages with its own protection is one), or 0 if unknown
// (vm_map_limit_linux.cpp).
uint64_t vm_map_limit();
// The mappings this process has now (0 if unknown), for messages at the limit.
uint64_t vm_map_count();

// Zeroed read-write memory of `bytes` that takes no memory until touched
// (lazy_memory_linux.cpp); nullptr (and *error) if it cannot be mapped.
std::byte *lazy_zero_alloc(size_t bytes, std::string *error);
void lazy_zero_free(std::byte *p, size_t bytes);

// A child made by fork() gets neither view (the service view is
// MADV_DONTFORK; the application view, into which the frame pool maps, is
// replaced by inaccessible anonymous memory first thing in the child; the
// memory object's descriptor is closed there too), so it can neither change
// the job's memory nor wait on a protocol whose ranks it is not part of.
// Needs fork_child_hook_install.
bool vm_exclude_from_fork(const GlobalRange &range, std::string *error);
// The same for the cache's frame pool (its view; its descriptor is closed).
bool vm_exclude_pool_from_fork(const FramePool &pool, std::string *error);
// Runs child() first thing in the child of every later fork() (nullptr: no
// hook). posix_spawn/vfork children share the memory image until they exec
// and run no hook, so system() and popen() are unaffected.
bool fork_child_hook_install(void (*child)(), std::string *error);
// Program mode: the child keeps copies instead (fork_linux.cpp): every
// mapping of global memory, the application view and these windows of the
// executable, becomes private memory with what this rank could read at the
// fork; the rest stays inaccessible. Called for each window as it is mapped.
void fork_copy_window(uintptr_t lo, size_t len);
// In a fork() child: whether it kept such copies.
bool fork_child_has_copies();

// System calls on global memory. The kernel does not fault a user copy in
// (a read() into a page without access fails with EFAULT or comes back
// short), so the interposed read, write, pread, pwrite, readv, writev,
// preadv, pwritev, recv, recvfrom, recvmsg, send, sendto, sendmsg, fread and
// fwrite (and their _64, _unlocked and __*_chk forms) move the bytes of a
// buffer overlapping [lo, hi) through a private bounce buffer: the copy into
// or out of global memory is made by ordinary loads and stores, which fault
// and follow the protocol like the program's own. usable(addr, len) says
// whether every byte of a range may be allocated; if not, the call goes to
// libc unchanged and fails with EFAULT as it would without Agora. Every
// other call costs one range check.
using RangeUsable = bool (*)(uintptr_t addr, size_t len);
void global_io_enable(uintptr_t lo, uintptr_t hi, RangeUsable usable);
void global_io_disable();
// One more range (program mode's windows) treated like [lo, hi); at most 4
// (false beyond).
bool global_io_add_range(uintptr_t lo, uintptr_t hi);

// Called with the faulting address; returns true if it made the access
// possible (the instruction is retried), false if the fault is not ours.
using FaultCallback = bool (*)(void *addr, bool is_write);
bool fault_handler_install(FaultCallback callback, uintptr_t lo, uintptr_t hi);
void fault_handler_uninstall();
// More ranges the handler passes to the callback (program mode's shared
// windows of the executable's .data/.bss); at most 4, added before threads
// fault on them.
bool fault_handler_add_range(uintptr_t lo, uintptr_t hi);
// Called (from the handler) with the address of a fault the callback did not
// take, before the program's action runs: program mode's hint that a private
// pointer may have crossed ranks. nullptr: none.
void fault_handler_set_hint(void (*hint)(void *addr));
// A thread started while its creator was inside the fault handler (a
// faulting thread handles messages while it waits) inherits SIGSEGV
// blocked, and its first fault would kill the process: threads the runtime
// starts call this first.
void fault_signal_unblock();

// Doorbell: lets a process on the same node wake a napping thread of
// another with a real-time signal. doorbell_setup() (on the main thread, at
// init) picks the signal: `requested`, or 0 for the first of
// SIGRTMIN+5..SIGRTMAX whose action is the default; it fails with a message
// naming AGORA_DOORBELL_SIGNAL. The waiting thread calls doorbell_block()
// once, then naps in doorbell_wait(); others ring it by (process id, thread
// id, its signal). A signal of that number that is not a ring (the
// application's own) is handed back to the main thread, never swallowed.
// With socket_fd >= 0 (a remote doorbell, below) the nap also ends when a
// datagram arrives there, which counts as a ring.
bool doorbell_setup(int requested, std::string *error);
int doorbell_signal();
void doorbell_block();
bool doorbell_wait(uint32_t us, int socket_fd = -1);  // naps up to us; true if rung
void doorbell_ring(int pid, int tid, int signo);
uint64_t doorbell_signals_handed_back();  // application signals the waiting thread passed on
// Remote doorbell: a non-blocking UDP socket on every IPv4 address (any
// port: *port is the one the kernel chose) that a process on another host
// rings with a 1-byte datagram to end the nap of doorbell_wait(us, fd). Its
// content is ignored. open returns the descriptor, or -1 and *error.
std::vector<Ipv4Interface> ipv4_interfaces();  // up, not loopback, in the kernel's order
std::string ipv4_text(uint32_t address);       // dotted quad of a host-order address
int remote_doorbell_open(uint16_t *port, std::string *error);
bool remote_doorbell_ring(int fd, uint32_t address, uint16_t port);  // false: not sent
int remote_doorbell_drain(int fd);                                   // datagrams read (at most 256)
uint64_t doorbell_datagrams_taken();  // datagrams doorbell_wait read, over the process's life
void remote_doorbell_close(int fd);
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
// The kernel thread ids of this process's threads (from /proc/self/task).
std::vector<int> thread_ids();
// The inode of this process's PID namespace (0 if unknown): pids and tids
// mean the same process only between processes with equal, non-zero ids.
uint64_t pid_namespace_id();

// Function pointers across ranks: module is "" for the executable, else the
// shared library's path as loaded; offset is from the module's load base.
// Both fail (with a message in *error) unless the address is in an
// executable segment of a loaded module.
bool code_ref_from_address(const void *fn, std::string *module, uint64_t *offset, std::string *error);
void *code_ref_to_address(const std::string &module, uint64_t offset, std::string *error);

// Whether this process could create or overwrite the file at `path` now:
// an existing file must open for writing (it is not truncated) and not be a
// directory; a new one must be creatable in an existing directory (it is
// created and removed again). Tried, not inferred from the mode bits, which
// say nothing for root or for read-only and pseudo file systems. On false,
// *reason says why (e.g. "directory /x does not exist").
bool file_writable(const std::string &path, std::string *reason);

double now_seconds();        // monotonic
std::string host_name();     // gethostname (host_name_linux.cpp); "unknown" if it fails
void sleep_us(uint32_t us);  // nanosleep
void thread_yield();
void thread_reduce_timer_slack();  // finer nanosleep wake-ups for the calling thread

// Threads that are joined, never detached (thread_linux.cpp): a thread has
// finished only when it is joined, since after its function returns it still
// runs code (thread-specific data and thread_local destructors, libc's
// teardown) for as long as the scheduler lets it. thread_start fails with
// the reason in *error; thread_try_join never blocks (true: the thread had
// finished and is now joined); every started thread is joined exactly once.
using ThreadHandle = uint64_t;
bool thread_start(std::function<void()> fn, ThreadHandle *out, std::string *error);
bool thread_try_join(ThreadHandle thread);
void thread_join(ThreadHandle thread);

}  // namespace agora::platform
