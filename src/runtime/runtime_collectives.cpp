// The SPMD collectives: barrier and reduce, called by one thread per rank
// and numbered in the collective ledger (which names a mismatch).
#include <cstring>
#include <vector>

#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"
#include "runtime/runtime_internal.h"

namespace agora {

using namespace runtime_internal;

// A collective called from a thread that may not: an agora thread (the
// fork-join model has thread barriers instead), or a second thread of the rank.
static int collective_misuse(const char *fn, uint64_t agora_thread) {
  if (agora_thread)
    log_error(
        "%s called from an agora thread (id %llu): collectives are for one thread per rank "
        "in the SPMD model; fork-join threads synchronise with locks, joins and thread barriers "
        "(agora_thread_barrier_wait)",
        fn, (unsigned long long)agora_thread);
  else
    log_error("%s: another thread of this rank is already in %s; call it from one thread per rank", fn, fn);
  return AGORA_ERR_MISUSE;
}

int Runtime::barrier(bool patient, CollectiveKind kind) {
  if (tl_thread_id != 0) return collective_misuse(collective_name(kind), tl_thread_id);
  ObservedSpan observed(TraceKind::Barrier, 0, 0, (uint64_t)(uintptr_t)collective_name(kind));
  // Global pointers: every write issued before the barrier is at its home
  // before this rank arrives, and no cached copy survives it.
  gptr_.release();
  WaitNote note{WaitKind::Collective, 0, 0};
  int status = timed_sync(
      note,
      [&](Waiter *w) -> int {
        if (barrier_->waiting()) return AGORA_ERR_MISUSE;
        note.a = ledger_.begin(kind);
        return barrier_->arrive(w, note.a);
      },
      patient);
  if (status == AGORA_ERR_MISUSE) collective_misuse(collective_name(kind), 0);
  if (status == AGORA_OK) gptr_.acquire();
  return status;
}

int Runtime::reduce(void *buf, size_t count, ReduceType type, ReduceOp op, CollectiveKind kind) {
  const char *fn = collective_name(kind);
  if (tl_thread_id != 0) return collective_misuse(fn, tl_thread_id);
  if (count > ReduceService::kMaxCount) {
    // Returned, not fatal: if other ranks passed a valid count, the ledger
    // names the mismatch at this rank's next collective call.
    log_error("agora_reduce(count %zu): too many elements (at most %zu in one call)", count, ReduceService::kMaxCount);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  // Work on a private copy: buf may itself be global memory, and touching it
  // under the lock could fault.
  std::vector<std::byte> local(count * 8);
  std::memcpy(local.data(), buf, count * 8);
  ObservedSpan observed(TraceKind::Reduce, 0, 0, (uint64_t)(uintptr_t)fn);
  WaitNote note{WaitKind::Collective, 0, 1};
  int status = timed_sync(note, [&](Waiter *w) -> int {
    if (reduce_->waiting()) return AGORA_ERR_MISUSE;
    note.a = ledger_.begin(kind);
    return reduce_->start(local.data(), count, type, op, w, note.a);
  });
  if (status == AGORA_ERR_MISUSE) return collective_misuse(fn, 0);
  std::memcpy(buf, local.data(), count * 8);
  return status;
}

}  // namespace agora
