#include "runtime/global_stacks.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "platform/arch.h"
#include "runtime/runtime.h"

namespace agora {

namespace {
// A guard this large below each stack: compilers probe large frames page
// by page only with -fstack-clash-protection (agoracc passes it); the
// extra pages catch a frame that skips a few pages without it.
constexpr uint64_t kGuardBytes = 64 << 10;
constexpr size_t kSignalStackBytes = 256 << 10;
// Below the switch point, for the frames of the switch itself (the x86-64
// red zone is 128 bytes; aarch64 Linux has none).
constexpr uintptr_t kSwitchMargin = 1024;

struct Body {
  uintptr_t stack_lo = 0, stack_hi = 0;  // the global stack (0: the thread's own)
  uintptr_t private_top = 0;
  bool active = false;
  bool exited = false;  // ended by body_exit
  bool ending = false;  // the body-end hook runs
  uintptr_t block = 0;  // the arena block holding guard and stack
  void *exit_ret = nullptr;
  void *result = nullptr;  // the body's, kept while the hook runs
  void *jump[5] = {};      // __builtin_setjmp's buffer
};
thread_local Body tl_body;
std::atomic<BodyEndHook> g_body_end_hook{nullptr};
void (*g_prologue)() = nullptr;

inline uintptr_t current_sp() { return platform::stack_pointer_exact(); }
}  // namespace

bool on_global_stack() {
  uintptr_t sp = current_sp();
  return sp >= tl_body.stack_lo && sp < tl_body.stack_hi;
}
uintptr_t private_stack_top() { return tl_body.private_top; }
bool in_body() { return tl_body.active; }

void set_body_prologue(void (*prologue)()) { g_prologue = prologue; }

void body_exit(void *ret) {
  tl_body.exit_ret = ret;
  __builtin_longjmp(tl_body.jump, 1);
}

void set_body_end_hook(BodyEndHook hook) { g_body_end_hook.store(hook); }

bool Runtime::stack_guard_fault(void *addr) {
  std::lock_guard<std::mutex> g(guards_mutex_);
  uintptr_t a = (uintptr_t)addr;
  auto it = guards_.upper_bound(a);
  if (it == guards_.begin()) return false;
  --it;
  if (a >= it->first + kGuardBytes) return false;
  fatal(
      "stack overflow in %s: the access at %p is in the guard below its %llu-byte stack in "
      "global memory; raise AGORA_STACK (e.g. AGORA_STACK=%lluM)",
      it->second.c_str(), addr, (unsigned long long)config_.stack_bytes,
      (unsigned long long)((config_.stack_bytes * 4 + (1 << 20) - 1) >> 20));
}

void *Runtime::run_body(void *(*fn)(void *), void *arg, const std::string &who, bool *exited) {
  // Everything used after the jump back lives in tl_body, not in locals
  // (registers are not restored by __builtin_longjmp).
  if (tl_body.active) fatal("internal: %s started inside another body on one thread", who.c_str());
  tl_body = Body{};
  if (program_mode_) {
    uint64_t page = page_size();
    uint64_t stack = (config_.stack_bytes + page - 1) / page * page;
    // A whole number of pages, page aligned inside the arena block.
    void *mem = malloc_local(stack + kGuardBytes + page);
    if (!mem)
      fatal(
          "cannot allocate the %llu-byte stack of %s in this rank's global heap: lower "
          "AGORA_STACK or %s",
          (unsigned long long)stack, who.c_str(), raise_memory_hint().c_str());
    tl_body.block = (uintptr_t)mem;
    uintptr_t guard = (tl_body.block + page - 1) / page * page;
    {
      std::lock_guard<std::mutex> g(guards_mutex_);
      guards_[guard] = who;
    }
    if (!platform::vm_protect((void *)guard, kGuardBytes, Access::None))
      fatal("cannot protect the stack guard of %s: %s", who.c_str(), system_error_text(errno));
    std::string error;
    if (!platform::alt_signal_stack_install(kSignalStackBytes, &error))
      fatal("cannot start %s: %s", who.c_str(), error.c_str());
    tl_body.stack_lo = guard + kGuardBytes;
    tl_body.stack_hi = guard + kGuardBytes + stack;
  }
  if (g_prologue) g_prologue();
  tl_body.active = true;
  if (__builtin_setjmp(tl_body.jump) == 0) {
    if (program_mode_) {
      tl_body.private_top = current_sp() - kSwitchMargin;
      tl_body.exit_ret = platform::call_on_stack(fn, arg, (void *)tl_body.stack_hi);
    } else {
      tl_body.exit_ret = fn(arg);
    }
  } else if (!tl_body.ending) {
    tl_body.exited = true;  // agora_thread_exit
  }
  if (!tl_body.ending) {
    // The thread's destructors, before it counts as ended. An
    // agora_thread_exit inside them comes back to the setjmp above and
    // then here, with `ending` set: the hook is over, the body's result kept.
    tl_body.ending = true;
    tl_body.result = tl_body.exit_ret;
    if (BodyEndHook hook = g_body_end_hook.load()) hook(tl_body.exited);
  }
  *exited = tl_body.exited;
  void *ret = tl_body.result;
  // A fork() child that ends its copy of main or of a thread ends there, as
  // a process whose only thread returns does: the runtime's state is its
  // parent's (its locks may be held by threads the child does not have).
  // Program mode runs the program's exit handlers; the last, Agora's,
  // leaves with _exit before MPI's (program_mode.cpp).
  if (in_forked_child()) {
    const int status = who == "main" && !tl_body.exited ? (int)(intptr_t)ret : 0;
    if (program_mode_) std::exit(status);  // NOLINT(concurrency-mt-unsafe): the child's only thread
    std::fflush(nullptr);
    _exit(status);
  }
  uintptr_t block = tl_body.block;
  if (block) {
    uint64_t page = page_size();
    uintptr_t guard = (block + page - 1) / page * page;
    {
      std::lock_guard<std::mutex> g(lock_);
      // The guard's pages get back the access the protocol gives them.
      for (uintptr_t p = guard; p < guard + kGuardBytes; p += page)
        set_access(space_->page_of(p), engine_->local_access(space_->page_of(p)));
      free_local(block - space_->base());
    }
    std::lock_guard<std::mutex> g(guards_mutex_);
    guards_.erase(guard);
  }
  platform::alt_signal_stack_remove();
  tl_body = Body{};
  return ret;
}

}  // namespace agora
