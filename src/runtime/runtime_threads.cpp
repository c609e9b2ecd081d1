// Fork-join threads: create (placed by the AGORA_THREADS_PER_RANK rule, or
// on a chosen rank), start on the target rank, join; and finalize's wait
// until no agora thread runs, or can still be created, on any rank.
#include <cstring>

#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"
#include "runtime/runtime_internal.h"
#include "runtime/service_timing.h"

namespace agora {

using namespace runtime_internal;

namespace runtime_internal {

// The agora thread running on this OS thread (id 0: not one, e.g. main), so
// that a thread joining itself is an error rather than a hang.
thread_local Rank tl_thread_rank = -1;
thread_local uint64_t tl_thread_id = 0;

}  // namespace runtime_internal

uint64_t Runtime::thread_self() const {
  uint64_t high = (uint64_t)(rank() + 1) << 48;
  return tl_thread_id ? high | tl_thread_id : high | (1ull << 47) | this_thread_token();
}

// ---- fork-join threads ----------------------------------------------------------

int Runtime::thread_create(Rank target, void *(*fn)(void *), void *arg, Rank *where, uint64_t *id) {
  // The function travels as (module, offset): ASLR loads the program at a
  // different address on every rank.
  std::string module, error;
  uint64_t offset = 0;
  if (!platform::code_ref_from_address((const void *)fn, &module, &offset, &error)) {
    log_error("agora_thread_create: the function pointer cannot be run: %s", error.c_str());
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  std::vector<std::byte> ref(sizeof offset + module.size());
  std::memcpy(ref.data(), &offset, sizeof offset);
  std::memcpy(ref.data() + sizeof offset, module.data(), module.size());
  ThreadCreateOp op;
  WaitNote note{WaitKind::ThreadCreate};
  bool placed = target < 0;
  size_t live = 0;
  int refused = noted_wait(note, op.w, [&]() -> int {
    if (placed) {
      live = placed_live_.size();
      // A pthreads program may start more threads than there are slots, as
      // on one machine with more threads than cores: the placement rule
      // goes round the ranks again (docs/programs.md, "Placement").
      if (live >= (size_t)thread_slots() && !program_mode_) return AGORA_ERR_MISUSE;
      // In program mode main holds rank 0's first slot (SPLASH codes run the
      // worker in main too): the first thread goes to the next slot.
      uint64_t slot = threads_placed_++ + (program_mode_ && rank() == 0 ? 1 : 0);
      target = (Rank)((slot / config_.threads_per_rank) % compute_nranks());
    }
    note.a = (uint64_t)target;
    threads_->create(target, {ref.data(), ref.size()}, (uint64_t)(uintptr_t)arg, &op);
    return AGORA_OK;
  });
  if (refused) {
    log_error(
        "agora_thread_create: this rank already has %zu threads it placed and has not joined, "
        "as many as there are slots (%d ranks x %d threads per rank); join some first, or "
        "raise the slots with --threads-per-rank / AGORA_THREADS_PER_RANK or more ranks",
        live, compute_nranks(), (int)config_.threads_per_rank);
    return refused;
  }
  if (op.w.status != AGORA_OK) {
    log_error("agora_thread_create: rank %d could not start the thread (see its message)", target);
    return op.w.status;
  }
  *where = target;
  *id = op.id;
  if (placed) {
    std::lock_guard<std::mutex> g(lock_);
    placed_live_.insert({target, op.id});
  }
  return 0;
}

int Runtime::start_thread(uint64_t id, Payload fn, uint64_t arg) {
  uint64_t offset = 0;
  std::memcpy(&offset, fn.data, sizeof offset);
  std::string module((const char *)fn.data + sizeof offset, fn.size - sizeof offset), error;
  void *code = platform::code_ref_to_address(module, offset, &error);
  if (!code) {
    log_error("agora_thread_create: cannot find the thread's function on this rank: %s", error.c_str());
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  reap_os_threads();
  auto body = [this, id, code, arg] { run_thread(id, (void *(*)(void *))code, (void *)(uintptr_t)arg); };
  platform::ThreadHandle thread;
  if (!platform::thread_start(body, &thread, &error)) {
    log_error("agora_thread_create: cannot start an OS thread on this rank: %s", error.c_str());
    return AGORA_ERR_NO_MEMORY;
  }
  os_threads_.push_back(thread);
  return 0;
}

void Runtime::reap_os_threads() {
  size_t kept = 0;
  for (platform::ThreadHandle thread : os_threads_)
    if (!platform::thread_try_join(thread)) os_threads_[kept++] = thread;
  os_threads_.resize(kept);
}

void Runtime::run_thread(uint64_t id, void *(*fn)(void *), void *arg) {
  platform::fault_signal_unblock();
  tl_thread_rank = rank();
  tl_thread_id = id;
  observe_name_thread("agora thread", (int64_t)id);
  bool exited = false;
  void *ret = run_body(fn, arg, "agora thread " + std::to_string(id) + " on rank " + std::to_string(rank()), &exited);
  {
    std::lock_guard<std::mutex> g(lock_);
    threads_->exited(id, (uint64_t)(uintptr_t)ret);
  }
}

int Runtime::thread_join(Rank where, uint64_t id, void **ret) {
  if (id != 0 && where == tl_thread_rank && id == tl_thread_id) {
    log_error("agora_thread_join: a thread cannot join itself (rank %d, id %llu)", where, (unsigned long long)id);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  ThreadJoinOp op;
  WaitNote note{WaitKind::ThreadJoin, (uint64_t)where, id};
  noted_wait(
      note, op.w,
      [&] {
        threads_->join(where, id, &op);
        return 0;
      },
      true);
  if (op.w.status != AGORA_OK) {
    const char *why = op.error == JoinError::AlreadyJoined ? "was already joined"
                      : op.error == JoinError::BeingJoined ? "is already being joined by another thread"
                                                           : "was never created";
    log_error("agora_thread_join: thread (rank %d, id %llu) %s", where, (unsigned long long)id, why);
    return op.w.status;
  }
  if (ret) *ret = (void *)(uintptr_t)op.ret;
  {
    std::lock_guard<std::mutex> g(lock_);
    placed_live_.erase({where, id});  // its slot is free again
  }
  return 0;
}

void Runtime::request_job_exit(int status, bool quick) {
  std::lock_guard<std::mutex> g(lock_);
  threads_->request_exit(status, quick);
}

void Runtime::set_job_exit_handler(std::function<void(int status, bool quick)> handler) {
  std::lock_guard<std::mutex> g(lock_);
  threads_->set_exit_handler(std::move(handler));
}

void Runtime::finish_threads() {
  // In the fork-join model the other ranks reach finalize at once and run
  // here the threads the main rank places on them, so finalize must wait
  // until no agora thread runs, or can still be created, on any rank. Counts
  // only grow: two rounds with the same totals mean no rank did anything in
  // between, and then created == ended means no thread is left.
  //
  // A thread has ended (exited) when its function returns, but its OS thread
  // runs on: the program's thread-specific data and thread_local destructors,
  // then libc's teardown, for as long as the scheduler delays it. Those may
  // touch global memory, so each rank also waits, before every round, until
  // the OS threads of its ended threads are joined: a detached one could
  // still run after this rank unmapped global memory, removed the fault
  // handler and finalised MPI (and, in program mode, while another rank has
  // stopped serving the pages it reads). Any thread that ended before the
  // last round's totals was joined by its rank before that round.
  int64_t last[2] = {0, 0};  // before the first round nothing had happened
  {
    std::lock_guard<std::mutex> g(lock_);
    main_finalizing_ = true;
  }
  for (;;) {
    WaitNote note{WaitKind::FinalizeThreads};
    bool noted = false;  // for the hang watch, while this rank's threads run
    for (;;) {
      {
        std::lock_guard<std::mutex> g(lock_);
        if (threads_->running() == 0) reap_os_threads();
        if (threads_->running() == 0 && os_threads_.empty()) {
          if (noted) wait_end(&note);
          break;
        }
        if (!noted) wait_begin(&note, nullptr);
        noted = true;
      }
      platform::sleep_us(service_timing::kFinalizeThreadsNap_us);  // the service thread serves meanwhile
    }
    barrier(true, CollectiveKind::Finalize);
    int64_t now[2];
    {
      std::lock_guard<std::mutex> g(lock_);
      now[0] = (int64_t)threads_->created();
      now[1] = (int64_t)threads_->ended();
    }
    reduce(now, 2, ReduceType::Int64, ReduceOp::Sum, CollectiveKind::Finalize);
    if (now[0] == last[0] && now[1] == last[1] && now[0] == now[1]) break;
    last[0] = now[0];
    last[1] = now[1];
  }
}

}  // namespace agora
