// What the hang watch sees of this rank: the waits its threads are in
// (noted by wait_begin/wait_end), described in words, and the snapshot the
// watch exchanges with the other ranks on each tick.
#include <algorithm>
#include <cstdio>

#include "runtime/runtime.h"
#include "runtime/service_timing.h"

namespace agora {

void Runtime::hang_tick() {
  double now = platform::now_seconds();
  if (now < next_watch_tick_ || !lock_.try_lock()) return;  // not yet, or next time round
  next_watch_tick_ = now + service_timing::kHangWatchTick_s;
  watch_->tick(now);
  lock_.unlock();
}

void Runtime::wait_begin(WaitNote *note, const Waiter *waiter) {
  note->since = last_inside_ = platform::now_seconds();
  note->waiter = waiter;
  waits_.push_back(note);
}

void Runtime::wait_end(WaitNote *note) {
  last_inside_ = platform::now_seconds();
  waits_.erase(std::find(waits_.begin(), waits_.end(), note));
}

std::string Runtime::describe_wait(const WaitNote &n) const {
  char line[256];
  switch (n.kind) {
    case WaitKind::Fault:
      std::snprintf(line, sizeof line, "a page fault at %p (its home is rank %d%s)", (void *)n.a, (int)n.b,
                    servers_.is_server_rank((Rank)n.b) ? ", a memory server" : "");
      break;
    case WaitKind::Lock:
      if (space_->contains(n.a))
        std::snprintf(line, sizeof line, "agora_lock(lock at %p), managed by rank %d", (void *)n.a,
                      locks_->manager_of(n.a));
      else
        std::snprintf(line, sizeof line, "agora_lock(lock %llu), managed by rank %d", (unsigned long long)n.a,
                      locks_->manager_of(n.a));
      break;
    case WaitKind::ThreadBarrier:
      std::snprintf(line, sizeof line, "agora_thread_barrier_wait(barrier at %p, count %llu), managed by rank %d",
                    (void *)n.a, (unsigned long long)n.b, manager_of_key(n.a));
      break;
    case WaitKind::ThreadReduce:
      std::snprintf(line, sizeof line, "agora_thread_reduce(reduction at %p, %llu elements), managed by rank %d",
                    (void *)n.a, (unsigned long long)n.b, manager_of_key(n.a));
      break;
    case WaitKind::Condition:
      std::snprintf(line, sizeof line, "agora_cond_wait(condition variable at %p), managed by rank %d", (void *)n.a,
                    manager_of_key(n.a));
      break;
    case WaitKind::Semaphore:
      std::snprintf(line, sizeof line, "agora_sem_wait(semaphore at %p), managed by rank %d", (void *)n.a,
                    manager_of_key(n.a));
      break;
    case WaitKind::Collective: {
      CollectiveKind kind = CollectiveLedger::kind_of(n.a);
      int len = std::snprintf(line, sizeof line, "%s (collective call #%llu)", collective_name(kind),
                              (unsigned long long)CollectiveLedger::sequence_of(n.a));
      if (n.b == 0 && barrier_->waiting())
        std::snprintf(line + len, sizeof line - len, ", waiting for rank %d's barrier signal",
                      barrier_->awaited_rank());
      else if (n.b == 1)
        std::snprintf(line + len, sizeof line - len, ", %s",
                      rank() == 0 ? "waiting for every rank's contribution" : "waiting for rank 0's result");
      break;
    }
    case WaitKind::Free:
      std::snprintf(line, sizeof line, "agora_free of a block of rank %d", (int)n.a);
      break;
    case WaitKind::ThreadCreate:
      std::snprintf(line, sizeof line, "agora_thread_create on rank %d", (int)n.a);
      break;
    case WaitKind::ThreadJoin:
      std::snprintf(line, sizeof line, "agora_thread_join of thread (rank %d, id %llu)", (int)n.a,
                    (unsigned long long)n.b);
      break;
    case WaitKind::Placed:
      std::snprintf(line, sizeof line,
                    "%s, waiting for rank 0 (which places every such allocation "
                    "and free, with every rank's acknowledgement)",
                    n.a ? "agora_free of a placed allocation" : "agora_malloc_placed");
      break;
    case WaitKind::Flush:
      if (n.b)
        std::snprintf(line, sizeof line, "agora_flush(%p, %llu)", (void *)n.a, (unsigned long long)n.b);
      else
        std::snprintf(line, sizeof line, "agora_flush_all()");
      break;
    case WaitKind::Gptr:
      std::snprintf(line, sizeof line, "%s (rank %d's memory)",
                    n.b == 0   ? "a global-pointer access"
                    : n.b == 1 ? "a global-pointer release (barrier, unlock)"
                    : n.b == 2 ? "agora_signal_wait"
                               : "agora_gptr_store_sync",
                    (int)n.a);
      break;
    case WaitKind::RankCall:
      std::snprintf(line, sizeof line, "a call run on rank %d (a file descriptor it owns)", (int)n.a);
      break;
    case WaitKind::FinalizeThreads:
      std::snprintf(line, sizeof line,
                    "agora_finalize, waiting for this rank's %zu agora threads to return "
                    "and %zu OS threads to finish",
                    threads_->running(), os_threads_.size());
      break;
  }
  return line;
}

RankState Runtime::hang_snapshot() {
  double now = platform::now_seconds();
  RankState s;
  // Application threads: every thread but MPI's and the service thread.
  size_t app = 0;
  for (int tid : platform::thread_ids())
    app += !std::binary_search(internal_threads_.begin(), internal_threads_.end(), tid);
  size_t blocked = 0;
  for (const WaitNote *n : waits_) {
    blocked += n->waiter ? !n->waiter->done() : threads_->running() > 0;
    s.waits += describe_wait(*n) + "\n";
    // A rank idling in finalize (the fork-join model's workers) waits for
    // nobody in particular: not a wait to warn about.
    bool finalizing = n->kind == WaitKind::FinalizeThreads ||
                      (n->kind == WaitKind::Collective && CollectiveLedger::kind_of(n->a) == CollectiveKind::Finalize);
    if (!finalizing) s.waited_s = std::max(s.waited_s, now - n->since);
  }
  s.blocked = blocked > 0 && blocked >= app;
  s.waits += locks_->describe_contention();
  s.waits += thread_barriers_->describe_contention();
  s.waits += thread_reductions_->describe_contention();
  s.waits += semaphores_->describe_contention();
  s.waits += conditions_->describe_contention();
  s.outside_s = waits_.empty() ? now - last_inside_ : 0;
  if (servers_.is_server()) {
    // A memory server only ever waits for messages: blocked, never "away".
    s.blocked = true;
    s.outside_s = 0;
  }
  s.sent = stats_.messages_sent;
  s.received = messages_in_;
  return s;
}

}  // namespace agora
