// Locks: collective creation (ids, and the signature that checks every rank
// created the same locks), and lock, trylock and unlock by the calling
// thread, with the stores traced in the span (store tracing).
#include <algorithm>

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

namespace {
uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t Runtime::lock_signature(uint64_t id) const {
  auto after = std::upper_bound(lock_creations_.begin(), lock_creations_.end(), id,
                                [](uint64_t v, const LockCreation &c) { return v < c.first; });
  if (after == lock_creations_.begin()) return 0;
  const LockCreation &c = *std::prev(after);
  if (id >= c.first + c.count) return 0;
  return mix64(c.signature + (id - c.first)) | 1;
}

uint64_t Runtime::create_locks(uint64_t count, uint64_t call_site) {
  std::lock_guard<std::mutex> g(lock_);
  if (tl_thread_id != 0) {
    // An agora thread creates locks alone (no other rank calls with it):
    // ids of this rank's own, clear of the collective ones.
    uint64_t first = (1ull << 62) | ((uint64_t)rank() << 40) | next_thread_lock_id_;
    next_thread_lock_id_ += count;
    return first;
  }
  if (next_lock_id_ + count > kBase) {
    // Ids from kBase up are the addresses of address-named locks.
    log_error("agora_lock_array_create(%llu): too many locks created collectively (at most 2^45 in all)",
              (unsigned long long)count);
    return UINT64_MAX;
  }
  uint64_t first = next_lock_id_;
  next_lock_id_ += count;
  // The signature: the creating call (site, how many creations before it, size).
  uint64_t signature = mix64(call_site ^ mix64(lock_creations_.size() + 1) ^ mix64(count << 1));
  lock_creations_.push_back({first, count, signature});
  return first;
}

int Runtime::lock(uint64_t id) {
  ObservedSpan observed(TraceKind::LockWait, id);
  WaitNote note{WaitKind::Lock, id};
  int status = timed_sync(note, [&](Waiter *w) { return locks_->acquire(id, this_thread_token(), w); });
  if (status == AGORA_OK) gptr_.acquire();
  if (status == AGORA_OK && store_trace_active()) store_trace_span_enter();
  if (status == AGORA_ERR_DEADLOCK)
    log_error("agora_lock: this thread already holds lock %llu (locks are not recursive; waiting "
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

uint64_t Runtime::thread_token() { return this_thread_token(); }

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
               store_ranges_to_pages(ranges, page_size(), [this](uintptr_t a) { return space_->page_of(a); },
                                     &stores);
    }
  }
  std::lock_guard<std::mutex> g(lock_);
  int status = locks_->release(id, this_thread_token(), traced ? &stores : nullptr);
  if (status != AGORA_OK) log_error("agora_unlock: lock %llu is not held by this thread", (unsigned long long)id);
  return status;
}

}  // namespace agora
