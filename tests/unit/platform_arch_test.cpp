// The per-architecture pieces of the platform layer (src/platform/arch.h):
// a fault's read/write bit as the SIGSEGV handler reads it, and
// call_on_stack (the stack switch, the result, the unwind info that lets a
// backtrace cross the switch). A plain program with no MPI and no other
// Agora source, so that a cross compiler and qemu-user can build and run it
// for another architecture (docs/internals.md, "Platforms").
#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "platform/arch.h"

#if defined(__aarch64__)
#include <asm/sigcontext.h>
#include <ucontext.h>
#endif

extern "C" void *agora_platform_call_on_stack(void *(*fn)(void *), void *arg, void *stack_top);

namespace {
int g_failures = 0;
void check(bool ok, const char *what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) ++g_failures;
}

// ---- fault_is_write -----------------------------------------------------------
char *g_page = nullptr;
size_t g_page_bytes = 0;
volatile int g_faults = 0;
volatile bool g_last_write = false;
volatile bool g_syndrome = true;  // the frame says how the access faulted

#if defined(__aarch64__)
// Whether the kernel put an esr_context record in the frame (qemu-user
// does not: fault_is_write then takes every fault for a write).
bool has_esr_record(const void *context) {
  uint64_t esr;
  return agora::platform::fault_syndrome(context, &esr);
}
#else
bool has_esr_record(const void *) { return true; }
#endif

void on_sigsegv(int, siginfo_t *info, void *context) {
  char *addr = (char *)info->si_addr;
  if (addr < g_page || addr >= g_page + g_page_bytes) _exit(3);  // not ours: a real crash
  g_last_write = agora::platform::fault_is_write(context);
  if (!has_esr_record(context)) g_syndrome = false;
  g_faults = g_faults + 1;
  // Open the page the way the access needs, as the protocol would.
  mprotect(g_page, g_page_bytes, g_last_write ? PROT_READ | PROT_WRITE : PROT_READ);
}

void test_fault_is_write() {
  g_page_bytes = (size_t)sysconf(_SC_PAGESIZE);
  g_page = (char *)mmap(nullptr, g_page_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(g_page != MAP_FAILED, "mmap a page");
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsegv;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, nullptr);

  volatile char *p = g_page;
  char c = p[10];  // read of an inaccessible page: a read fault
  if (!g_syndrome) {
    // No syndrome in the frame: every fault is taken for a write (correct,
    // the cost of a write fault), so the load opened the page for writing.
    std::printf("note: the signal frame carries no ESR record (qemu-user?): faults are taken for writes\n");
    check(g_faults == 1 && g_last_write, "without a syndrome, a fault is taken for a write");
    munmap(g_page, g_page_bytes);
    return;
  }
  check(g_faults == 1 && !g_last_write, "a load from a PROT_NONE page is a read fault");
  p[20] = (char)(c + 1);  // store to the now read-only page: a write fault
  check(g_faults == 2 && g_last_write, "a store to a PROT_READ page is a write fault");
  mprotect(g_page, g_page_bytes, PROT_NONE);
  p[30] = 7;  // store to an inaccessible page: one write fault opens it for both
  check(g_faults == 3 && g_last_write && p[30] == 7, "a store to a PROT_NONE page is a write fault");
  mprotect(g_page, g_page_bytes, PROT_NONE);
  // An atomic read-modify-write is a store too.
  __atomic_fetch_add((int *)(g_page + 64), 1, __ATOMIC_SEQ_CST);
  check(g_faults == 4 && g_last_write, "an atomic add on a PROT_NONE page is a write fault");

  sa.sa_handler = SIG_DFL;
  sa.sa_flags = 0;
  sigaction(SIGSEGV, &sa, nullptr);
  munmap(g_page, g_page_bytes);
}

#if defined(__aarch64__)
// The ESR decoding on frames built here, for where the kernel's frames
// cannot be had (qemu-user): the record walk and the syndrome's bits.
bool decode(const uint64_t *esr, bool after_fpsimd) {
  static ucontext_t uc;
  std::memset(&uc, 0, sizeof uc);
  unsigned char *at = uc.uc_mcontext.__reserved;
  if (after_fpsimd) {
    auto *fp = (fpsimd_context *)at;
    fp->head.magic = FPSIMD_MAGIC;
    fp->head.size = sizeof(fpsimd_context);
    at += sizeof(fpsimd_context);
  }
  if (esr) {
    auto *rec = (esr_context *)at;
    rec->head.magic = ESR_MAGIC;
    rec->head.size = sizeof(esr_context);
    rec->esr = *esr;
  }
  return agora::platform::fault_is_write(&uc);
}

void test_esr_decoding() {
  const uint64_t read_fault = 0x92000007;         // data abort from EL0, translation fault L3, WnR 0
  const uint64_t write_fault = 0x92000047;        // the same with WnR 1
  const uint64_t write_permission = 0x9200004f;   // permission fault L3, WnR 1
  const uint64_t instruction_abort = 0x82000007;  // EC 0x20: a fetch, not a data access
  check(!decode(&read_fault, false), "ESR: a data abort with WnR 0 is a read");
  check(decode(&write_fault, false), "ESR: a data abort with WnR 1 is a write");
  check(decode(&write_permission, true), "ESR: found after an fpsimd record; a permission fault with WnR 1 is a write");
  check(!decode(&read_fault, true), "ESR: found after an fpsimd record; WnR 0 is a read");
  check(!decode(&instruction_abort, false), "ESR: an instruction abort is not a write");
  check(decode(nullptr, true), "ESR: no record: taken for a write");
}
#endif

// ---- call_on_stack ------------------------------------------------------------
constexpr size_t kStackBytes = 256 << 10;
char *g_stack = nullptr;
int g_depth_before = 0;

int backtrace_depth() {
  void *frames[64];
  return backtrace(frames, 64);
}

void *on_new_stack(void *arg) {
  uintptr_t sp = agora::platform::stack_pointer_exact();
  bool inside = sp > (uintptr_t)g_stack && sp < (uintptr_t)g_stack + kStackBytes;
  check(inside, "fn runs with the stack pointer in the given stack");
  // The unwinder walks from the new stack back through the switch to the
  // caller's frames (the CFI of call_on_stack): at least one more frame
  // than the caller saw.
  int depth = backtrace_depth();
  check(depth > g_depth_before, "a backtrace on the new stack reaches the caller's frames");
  if (depth <= g_depth_before) std::printf("  (%d frames here, %d in the caller)\n", depth, g_depth_before);
  return (void *)((uintptr_t)arg + 1);
}

void *on_old_stack(void *arg) {
  // Back on a stack of the main thread's, as the runtime does when a thread
  // on a global stack calls into Agora.
  uintptr_t sp = agora::platform::stack_pointer_exact();
  check(!(sp > (uintptr_t)g_stack && sp < (uintptr_t)g_stack + kStackBytes),
        "a nested call_on_stack runs fn on the other stack");
  return (void *)((uintptr_t)arg * 2);
}

char g_private[64 << 10];

void *nest(void *arg) { return agora_platform_call_on_stack(on_old_stack, arg, g_private + sizeof g_private); }

__attribute__((noinline)) void test_call_on_stack() {
  g_stack = (char *)std::malloc(kStackBytes);
  uintptr_t sp_before = agora::platform::stack_pointer_exact();
  g_depth_before = backtrace_depth();
  // An unaligned top: call_on_stack rounds it down.
  void *r = agora_platform_call_on_stack(on_new_stack, (void *)41, g_stack + kStackBytes - 8);
  check(r == (void *)42, "call_on_stack returns fn's result");
  check(agora::platform::stack_pointer_exact() == sp_before, "the caller's stack pointer is restored");
  r = agora_platform_call_on_stack(nest, (void *)21, g_stack + kStackBytes);
  check(r == (void *)42, "call_on_stack nests (global stack, then private stack)");
  std::free(g_stack);
}
}  // namespace

int main() {
  test_fault_is_write();
#if defined(__aarch64__)
  test_esr_decoding();
#endif
  test_call_on_stack();
  for (int i = 0; i < 1000; ++i) agora::platform::cpu_relax();
  if (g_failures) {
    std::printf("%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all platform checks passed\n");
  return 0;
}
