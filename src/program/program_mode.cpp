// Program mode (docs/programs.md): Agora starts before main in a program
// built with agoracc; rank 0 runs main on a stack in global memory, the
// other ranks serve and run the threads placed on them; the job ends when
// main does (exit, or return from main).
#include <pthread.h>
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agora/agora.h"
#include "api/private_stack.h"
#include "common/log.h"
#include "platform/platform.h"
#include "program/program_abi.h"
#include "program/program_libc.h"
#include "program/program_state.h"
#include "runtime/global_stacks.h"
#include "runtime/program_request.h"
#include "runtime/runtime.h"

namespace agora {
Runtime *api_runtime();                                                  // agora_c.cpp
extern void (*g_on_publish)(Runtime *);                                  // agora_c.cpp
void program_heap_start(const AddressSpace &space, HeapPlacement heap);  // program_heap.cpp

namespace {
std::atomic<bool> g_started{false}, g_finishing{false}, g_finished{false};
thread_local bool tl_main = false;  // the thread running main (rank 0)
// exit(n) by an agora thread (any rank): rank 0 runs exit(n) on a thread of
// its own (the exit thread), once, as libc would on the caller's.
std::atomic<bool> g_job_exit_started{false};
int g_job_exit_status = 0;
thread_local bool tl_exit_thread = false;

struct MainCall {
  int (*real_main)(int, char **, char **);
  int argc;
  char **argv, **envp;
  bool exit_called;
  int exit_status;
};
MainCall g_main;

// The program's destructor functions (its .fini_array, which ld.so no longer
// sees: agora-program.ld). libc would run them after the exit handlers,
// last entry first; here they run at the same point of exit, but before the
// job ends, so that they still find the global heap and the shared globals.
void (*const *g_fini_first)(void) = nullptr;
void (*const *g_fini_end)(void) = nullptr;
std::atomic<bool> g_fini_ran{false};

void run_program_destructors() {
  if (g_fini_ran.exchange(true)) return;
  for (auto *f = g_fini_end; f != g_fini_first;) (*--f)();
}

void *main_body(void *) { return (void *)(intptr_t)g_main.real_main(g_main.argc, g_main.argv, g_main.envp); }

// A vector of strings copied into global memory (one block), so that
// threads on other ranks can read argv[i].
char **copy_strings(char **strings, int count) {
  size_t bytes = (size_t)(count + 1) * sizeof(char *);
  for (int i = 0; i < count; ++i) bytes += std::strlen(strings[i]) + 1;
  void *block = nullptr;
  if (agora_mem_malloc(bytes, &block) != AGORA_OK)
    fatal("cannot copy main's arguments (%zu bytes) into global memory", bytes);
  auto **copy = static_cast<char **>(block);
  char *text = (char *)(copy + count + 1);
  for (int i = 0; i < count; ++i) {
    size_t n = std::strlen(strings[i]) + 1;
    std::memcpy(text, strings[i], n);
    copy[i] = text;
    text += n;
  }
  copy[count] = nullptr;
  return copy;
}

void *exit_thread_body(void *) {
  tl_exit_thread = true;
  std::exit(g_job_exit_status);  // NOLINT(concurrency-mt-unsafe): the program's exit, once
}

// Rank 0, under the runtime's lock: a thread asked to end the job. The
// first request wins; the others' threads wait with the rest for the end.
void start_job_exit(int status, bool quick) {
  if (g_job_exit_started.exchange(true)) return;
  if (quick) api_runtime()->end_job_now(status);  // _exit: no handlers, no flush
  g_job_exit_status = status;
  pthread_attr_t attr;
  pthread_t thread;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&thread, &attr, exit_thread_body, nullptr) != 0)
    fatal("exit(%d) by an agora thread: cannot start the thread that runs the exit handlers", status);
  pthread_attr_destroy(&attr);
}

// exit(n) or _exit(n) (quick) by an agora thread that is not main, on any
// rank: rank 0 ends the job; this thread waits for that, as do the others
// (main in pthread_join too: the thread never ends).
[[noreturn]] void end_job_from_thread(int status, bool quick) {
  if (!quick) std::fflush(nullptr);  // this rank's output: the rank ends without its exit handlers
  auto request = [status, quick] {
    api_runtime()->request_job_exit(status, quick);
    for (;;) pause();
  };
  if (on_global_stack()) on_private_stack([&] { request(); });
  request();
  __builtin_unreachable();
}

// Rank 0's exit handler (registered before the program's own, so it runs
// after them): ends the job for every rank.
void finish_job(int status, void *) {
  // A fork() child is no rank: it ends here, before MPI's exit handlers,
  // and never ends the job or waits for its threads.
  if (Runtime::in_forked_child()) {
    run_program_destructors();  // on the child's private copies, as exit would
    std::fflush(nullptr);
    _exit(status);
  }
  if (g_finished.load() || !g_started.load()) return;
  if (tl_exit_thread) {
    // exit(n) by an agora thread: the program's handlers have run; its
    // threads still run or wait, so the job ends without finalize.
    run_program_destructors();
    std::fflush(nullptr);
    api_runtime()->end_job_now(status);
  }
  if (platform::thread_id() != platform::process_id()) {
    log_error(
        "exit(%d) called by a thread other than main on rank 0, outside the program's own "
        "code; the job ends without finishing its threads",
        status);
    return;
  }
  Runtime *rt = api_runtime();
  auto finish = [&] {
    run_program_destructors();
    g_finishing.store(true);
    agora_finalize();
    if (rt) rt->open_program_windows_after_stop();
    g_finished.store(true);
  };
  if (on_global_stack()) {
    // exit() reached from main's stack without the program's own call (a
    // library's): that stack is gone after finalize, so end here.
    on_private_stack([&] {
      finish();
      std::fflush(nullptr);
      _exit(status);
    });
  }
  finish();
}
}  // namespace

bool program_started() { return g_started.load(std::memory_order_relaxed); }
bool program_finishing() { return g_finishing.load(std::memory_order_relaxed); }
bool program_in_main() { return tl_main; }
bool program_finished() { return g_finished.load(std::memory_order_relaxed); }

}  // namespace agora

using namespace agora;

extern "C" {

void agora_program_start(int argc, char **argv, uintptr_t data_lo, uintptr_t data_hi, uintptr_t bss_lo,
                         uintptr_t bss_hi) {
  platform::same_address_layout(argv);  // may restart the process, before MPI starts
  ProgramRequest request;
  request.data_lo = data_lo;
  request.data_hi = data_hi;
  request.bss_lo = bss_lo;
  request.bss_hi = bss_hi;
  program_request_set(request);
  program_libc_check(bss_lo, bss_hi);
  // Before the start-up barrier: once rank 0 is past it, threads placed here
  // may run (and malloc) before agora_init has returned on this rank.
  g_on_publish = [](Runtime *rt) {
    program_heap_start(rt->space(), rt->config().heap);
    if (rt->rank() == 0) rt->set_job_exit_handler(start_job_exit);
    g_started.store(true);
  };
  agora_init(&argc, &argv);  // exits on failure
  if (agora_rank() != 0) {
    // Serve, and run the threads placed here, until the job ends.
    g_finishing.store(true);
    int status = agora_finalize();
    g_finished.store(true);
    std::fflush(nullptr);
    _exit(status == AGORA_OK ? 0 : 1);
  }
  on_exit(finish_job, nullptr);
}

void agora_program_destructors(void (*const *first)(void), void (*const *end)(void)) {
  g_fini_first = first;
  g_fini_end = end;
}

void agora_program_main(int (*real_main)(int, char **, char **), int argc, char **argv, char **envp) {
  Runtime *rt = api_runtime();
  int envc = 0;
  while (envp && envp[envc]) ++envc;
  g_main = MainCall{real_main, argc, copy_strings(argv, argc), copy_strings(envp, envc), false, 0};
  tl_main = true;
  bool exited = false;
  void *ret = rt->run_body(main_body, nullptr, "main", &exited);
  tl_main = false;
  // agora_thread_exit from main: pthread_exit semantics, the job ends once
  // every thread has (the exit handler waits for them) with status 0.
  int status = g_main.exit_called ? g_main.exit_status : exited ? 0 : (int)(intptr_t)ret;
  std::exit(status);  // NOLINT(concurrency-mt-unsafe): main's end: the exit handler waits for the other threads
}

void agora_program_exit(int status) {
  if (!g_started.load() || g_finished.load()) return;
  if (Runtime::in_forked_child()) return;  // libc's exit, then finish_job's _exit
  if (tl_main && in_body()) {
    // Leave main's global stack first: the job ends on the private one.
    g_main.exit_called = true;
    g_main.exit_status = status;
    body_exit(nullptr);
  }
  if (in_body()) end_job_from_thread(status, false);
}

void agora_program_quick_exit(int status) {
  if (!g_started.load() || g_finished.load() || Runtime::in_forked_child()) return;
  if (in_body()) end_job_from_thread(status, true);
  // Outside any agora thread (main's exit handlers, a library's thread):
  // this rank ends the job itself.
  api_runtime()->end_job_now(status);
}

int agora_program_mode(void) { return program_started() ? 1 : 0; }

}  // extern "C"
