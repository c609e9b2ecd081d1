// The access-fault path: the SIGSEGV handler's trampoline into the runtime,
// the check that lets system calls move bytes through global memory, the
// fork() child (which is no rank), and handle_fault, which asks the protocol
// engine for the page and waits for it.
#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"
#include "runtime/runtime_internal.h"

namespace agora {

using namespace runtime_internal;

namespace runtime_internal {

Runtime *g_fault_target = nullptr;
std::atomic<bool> g_forked_child{false};

bool fault_trampoline(void *addr, bool is_write) {
  if (g_forked_child.load(std::memory_order_relaxed)) {
    // The child has no global memory (MADV_DONTFORK) and is no rank: say
    // so and die of the fault, rather than wait on a protocol.
    if (platform::fork_child_has_copies()) {
      log_error(
          "%s of %p in a process made by fork(): the child has private copies only of the global memory "
          "(globals, stacks, heap) its rank held when fork() was called, and this page was not among "
          "them; it cannot fetch it, not being a rank (exec a program, or pass data through a pipe or a file)",
          is_write ? "write" : "read", addr);
      return false;
    }
    log_error(
        "global memory is not available in a process made by fork() (%s of %p): only the "
        "ranks themselves may touch it; pass data to the child through a pipe or a file, "
        "or exec a program",
        is_write ? "write" : "read", addr);
    return false;
  }
  return g_fault_target && g_fault_target->handle_fault(addr, is_write);
}

// System calls may move bytes through global memory that is allocated.
bool io_range_usable(uintptr_t addr, size_t len) {
  Runtime *rt = g_fault_target;
  if (!rt) return false;
  const AddressSpace &space = rt->space();
  uintptr_t end = addr + len;    // callers pass len > 0
  if (end < addr) return false;  // (maybe_allocated below covers program mode's windows)
  for (uintptr_t a = addr & ~(uintptr_t)(space.page_size() - 1); a < end; a += space.page_size())
    if (!space.maybe_allocated(a)) return false;
  return true;
}

// First thing in the child of fork(): it is not a rank. Global memory is
// absent there; the fault handler, the API and exit() must not act for the
// rank (its locks may be held by threads the child does not have).
void on_fork_child() {
  g_forked_child.store(true);
  platform::global_io_disable();  // a global buffer now fails with EFAULT, as unmapped memory does
  log_set_abort_hook(nullptr);    // a fatal error here must not abort the parent's job
  log_set_forked_child(platform::process_id());
  platform::fault_handler_set_hint(nullptr);  // the trampoline said why; the hint would mislead
}

}  // namespace runtime_internal

bool Runtime::in_forked_child() { return g_forked_child.load(std::memory_order_relaxed); }

bool Runtime::handle_fault(void *addr, bool is_write) {
  if (!space_->maybe_allocated((uintptr_t)addr)) return false;  // not ours: crash as usual
  if (program_mode_ && stack_guard_fault(addr)) return false;
  PageId page = space_->page_of((uintptr_t)addr);
  ObservedFault observed(page, space_->home_of(page), addr, is_write);
  Waiter w;
  WaitNote note{WaitKind::Fault, (uint64_t)(uintptr_t)addr, (uint64_t)space_->home_of(page)};
  noted_wait(
      note, w,
      [&] {
        (is_write ? stats_.write_faults : stats_.read_faults)++;
        engine_->on_fault(page, is_write ? Access::Write : Access::Read, &w);
        return 0;
      },
      false, &stats_.fault_time_s);
  if (w.status != AGORA_OK)
    fatal("%s of %p: no live allocation there (freed, or never allocated by rank %d)", is_write ? "write" : "read",
          addr, space_->home_of(page));
  return true;
}

}  // namespace agora
