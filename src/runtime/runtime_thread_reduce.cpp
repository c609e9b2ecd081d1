// Reductions among fork-join threads on any ranks (ThreadReduceService):
// the object's key is its address, its manager the home of its page. The
// calls never touch the object (no fault) and hold no lock while waiting;
// a contribution travels from a private copy of the caller's buffer, which
// may itself be global memory that only the caller may touch.
#include <cstring>
#include <vector>

#include "common/log.h"
#include "common/status.h"
#include "runtime/runtime.h"

namespace agora {

int Runtime::thread_reduction_init(uint64_t object, uint32_t count) {
  // (In program mode threads may outnumber the slots: a count above them can be met.)
  if (count > (uint64_t)thread_slots() && !program_mode_) {
    log_error(
        "agora_thread_reduction_init(%p): count %u can never be met: at most %d threads run at "
        "once (%d ranks x %d threads per rank); raise --threads-per-rank / "
        "AGORA_THREADS_PER_RANK or use more ranks",
        (void *)object, count, thread_slots(), compute_nranks(), (int)config_.threads_per_rank);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  return sync_op(WaitKind::ThreadReduce, object, [&](Waiter *w) { thread_reductions_->init(object, count, w); });
}

int Runtime::thread_reduce(uint64_t object, void *buf, size_t n, ReduceType type, ReduceOp op) {
  ThreadReduceService::Shape shape{n, type, op, true};
  shape.valid = n <= ThreadReduceService::kMaxElements && (type == ReduceType::Int64 || type == ReduceType::Double) &&
                (op == ReduceOp::Sum || op == ReduceOp::Min || op == ReduceOp::Max) && (buf || n == 0);
  if (!shape.valid)
    log_error(
        "agora_thread_reduce(%p): %s%s is not allowed (at most %zu elements of AGORA_INT64 or "
        "AGORA_DOUBLE, op AGORA_SUM, AGORA_MIN or AGORA_MAX); the round fails for every participant",
        (void *)object, ThreadReduceService::describe(shape).c_str(), buf ? "" : " with a NULL buffer",
        ThreadReduceService::kMaxElements);
  std::vector<std::byte> local(shape.valid ? n * 8 : 0);  // n bounded above: no overflow
  if (!local.empty()) std::memcpy(local.data(), buf, local.size());
  uint64_t self = thread_self();
  // Patient, like a thread barrier: the wait lasts as long as the slowest
  // participant computes.
  WaitNote note{WaitKind::ThreadReduce, object, n};
  int status = timed_sync(
      note,
      [&](Waiter *w) {
        thread_reductions_->reduce(object, self, shape, local.data(), w);
        return AGORA_OK;
      },
      true);
  if (status == AGORA_OK && !local.empty()) std::memcpy(buf, local.data(), local.size());
  return status;
}

int Runtime::thread_reduction_destroy(uint64_t object) {
  return sync_op(WaitKind::ThreadReduce, object, [&](Waiter *w) { thread_reductions_->destroy(object, w); });
}

}  // namespace agora
