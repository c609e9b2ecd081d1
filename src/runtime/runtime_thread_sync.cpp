// Synchronisation among threads on any ranks (the fork-join model): thread
// barriers, condition variables, semaphores. Each object is named by a key
// (its address in global memory) and served by a sync service at the
// manager, the home of the object's page; every wait is noted for the hang
// watch, so a wait that can never end is reported as a deadlock.
#include <cstdio>

#include "common/log.h"
#include "common/status.h"
#include "runtime/runtime.h"

namespace agora {

Rank Runtime::manager_of_key(uint64_t key) const {
  // Memory servers manage no sync object: an address's page picks a compute rank.
  if (space_->contains(key) && space_->servers() > 0) return (Rank)(space_->page_of(key) % (uint64_t)compute_nranks());
  if (space_->contains(key)) return space_->home_of(space_->page_of(key));
  return (Rank)(key % (uint64_t)compute_nranks());
}

int Runtime::thread_barrier_wait(uint64_t object, uint32_t count) {
  // (In program mode threads may outnumber the slots: a count above them can be met.)
  if (count > (uint64_t)thread_slots() && !program_mode_) {
    log_error(
        "agora_thread_barrier_wait(%p): count %u can never be met: at most %d threads run at "
        "once (%d ranks x %d threads per rank); raise --threads-per-rank / "
        "AGORA_THREADS_PER_RANK or use more ranks",
        (void *)object, count, thread_slots(), compute_nranks(), (int)config_.threads_per_rank);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  // Patient, like the waits for a condition and a semaphore: the wait
  // lasts as long as the slowest thread computes, and a waiter that kept
  // polling would take a core from the threads it waits for.
  WaitNote note{WaitKind::ThreadBarrier, object, count};
  return timed_sync(
      note,
      [&](Waiter *w) {
        thread_barriers_->wait(object, count, w);
        return AGORA_OK;
      },
      true);
}

int Runtime::cond_wait(uint64_t object, uint64_t lock_id, double deadline) {
  // Queued before the lock is released: a signal by the lock's next holder
  // then finds this waiter.
  Waiter queued, woken;
  WaitNote enqueue_note{WaitKind::Condition, object};
  int status = noted_wait(enqueue_note, queued, [&]() -> int {
    if (!locks_->holds(lock_id, thread_token())) return AGORA_ERR_NOT_HELD;
    conditions_->enqueue(object, &woken, &queued);
    return AGORA_OK;
  });
  if (status == AGORA_ERR_NOT_HELD) {
    log_error("agora_cond_wait(%p): the calling thread does not hold the lock it passed", (void *)object);
    return AGORA_ERR_NOT_HELD;
  }
  unlock(lock_id);
  if (deadline < 0 || !wait_until(woken, deadline)) {
    // Untimed, or the deadline passed: withdraw, then wait for the answer
    // (the cancel's, or a wake that was already on its way).
    WaitNote note{WaitKind::Condition, object};
    noted_wait(
        note, woken,
        [&] {
          if (deadline >= 0) conditions_->cancel(object, &woken);
          return AGORA_OK;
        },
        true);
  }
  int relocked = lock(lock_id);
  return relocked ? relocked : woken.status;
}

int Runtime::cond_signal(uint64_t object, bool all) {
  std::lock_guard<std::mutex> g(lock_);
  conditions_->signal(object, all);
  return AGORA_OK;
}

int Runtime::sem_init(uint64_t object, uint64_t value) {
  int status = sync_op(WaitKind::Semaphore, object, [&](Waiter *w) { semaphores_->init(object, value, w); });
  if (status == AGORA_ERR_INVALID_ARGUMENT)
    log_error("agora_sem_init(%p): threads are waiting on this semaphore", (void *)object);
  return status;
}

int Runtime::sem_wait(uint64_t object, bool try_only) {
  return sync_op(
      WaitKind::Semaphore, object, [&](Waiter *w) { semaphores_->wait(object, try_only, w); }, !try_only);
}

int Runtime::sem_post(uint64_t object) {
  int status = sync_op(WaitKind::Semaphore, object, [&](Waiter *w) { semaphores_->post(object, w); });
  if (status == AGORA_ERR_INVALID_ARGUMENT)
    log_error("agora_sem_post(%p): the count would exceed %llu (SEM_VALUE_MAX)", (void *)object,
              (unsigned long long)SemaphoreService::kMaxValue);
  return status;
}

int Runtime::sem_get_value(uint64_t object, int *value) {
  int64_t v = 0;
  int status = sync_op(WaitKind::Semaphore, object, [&](Waiter *w) { semaphores_->get_value(object, &v, w); });
  *value = (int)v;
  return status;
}

int Runtime::sem_destroy(uint64_t object) {
  int status = sync_op(WaitKind::Semaphore, object, [&](Waiter *w) { semaphores_->destroy(object, w); });
  if (status == AGORA_BUSY) log_error("agora_sem_destroy(%p): threads are waiting on this semaphore", (void *)object);
  return status;
}

}  // namespace agora
