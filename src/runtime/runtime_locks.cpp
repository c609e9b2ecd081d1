// Locks: creation (the ids and the signature that checks every rank created
// the same locks are LockIds', locks/lock_ids.h), and lock, trylock and
// unlock by the calling thread, with the stores traced in the span (store
// tracing).

#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"
#include "runtime/runtime_internal.h"
#include "runtime/store_trace.h"

namespace agora {

using namespace runtime_internal;

namespace runtime_internal {

// Locks are held by threads; this names the calling thread within the rank.
uint64_t this_thread_token() {
  static std::atomic<uint64_t> next{1};
  thread_local uint64_t token = next.fetch_add(1);
  return token;
}

}  // namespace runtime_internal

uint64_t Runtime::create_locks(uint64_t count, uint64_t call_site) {
  std::lock_guard<std::mutex> g(lock_);
  return lock_ids_.create(count, call_site, tl_thread_id != 0, rank());  // ids and signatures: locks/lock_ids.h
}

int Runtime::lock(uint64_t id) {
  ObservedSpan observed(TraceKind::LockWait, id);
  WaitNote note{WaitKind::Lock, id};
  int status = timed_sync(note, [&](Waiter *w) { return locks_->acquire(id, this_thread_token(), w); });
  if (status == AGORA_OK) gptr_.acquire();
  if (status == AGORA_OK && store_trace_active()) store_trace_span_enter();
  if (status == AGORA_ERR_DEADLOCK)
    log_error(
        "agora_lock: this thread already holds lock %llu (locks are not recursive; waiting "
        "would never end)",
        (unsigned long long)id);
  return status;
}

int Runtime::trylock(uint64_t id) {
  ObservedSpan observed(TraceKind::LockWait, id);
  WaitNote note{WaitKind::Lock, id};
  int status = timed_sync(note, [&](Waiter *w) { return locks_->acquire(id, this_thread_token(), w, true); });
  if (status == AGORA_OK) gptr_.acquire();
  if (status == AGORA_OK && store_trace_active()) store_trace_span_enter();
  return status;
}

int Runtime::lock_destroy(uint64_t id) {
  WaitNote note{WaitKind::Lock, id};
  int status = timed_sync(note, [&](Waiter *w) { return locks_->destroy(id, w); });
  if (status == AGORA_ERR_MISUSE)
    log_error(
        "agora_lock_destroy: lock %llu is held or waited for; release it (and let every "
        "waiter have it) before destroying it",
        (unsigned long long)id);
  return status;
}

uint64_t Runtime::thread_token() { return this_thread_token(); }

bool Runtime::holds_lock(uint64_t id) {
  std::lock_guard<std::mutex> g(lock_);
  return locks_->holds(id, this_thread_token());
}

int Runtime::unlock(uint64_t id) {
  // A program built with store tracing says exactly what the thread stored
  // in the span (regc sends those bytes; other protocols ignore them).
  // Global pointers: the next holder sees this thread's writes.
  gptr_.release();
  std::vector<StoreRange> stores;
  bool traced = false;
  if (store_trace_active()) {
    std::lock_guard<std::mutex> g(lock_);
    if (locks_->holds(id, this_thread_token())) {
      std::vector<TracedRange> ranges;
      traced = store_trace_span_exit(&ranges) &&
               store_ranges_to_pages(
                   ranges, page_size(), [this](uintptr_t a) { return space_->page_of(a); }, &stores);
    }
  }
  std::lock_guard<std::mutex> g(lock_);
  int status = locks_->release(id, this_thread_token(), traced ? &stores : nullptr);
  if (status != AGORA_OK) log_error("agora_unlock: lock %llu is not held by this thread", (unsigned long long)id);
  return status;
}

}  // namespace agora
