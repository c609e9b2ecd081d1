// How a thread waits inside the library: polling one message at a time,
// yielding when idle, sleeping (AGORA_WAIT=block, patient waits); waits with
// a deadline; and the noted waits every API operation uses, which the hang
// watch sees and the statistics time.
#include "runtime/runtime.h"
#include "runtime/runtime_internal.h"
#include "runtime/service_timing.h"

namespace agora {

using namespace runtime_internal;

namespace runtime_internal {

// Threads woken from a sleeping wait that have not run yet. Until they do,
// the service thread holds back: under sc the message after a grant is often
// the next rank's request for the same page, and serving it before the woken
// thread has made its access takes the page away again (page ping-pong
// without progress when ranks outnumber cores).
std::atomic<int> g_woken_not_resumed{0};
void wake_sleeper(std::atomic<uint32_t> *state) {
  g_woken_not_resumed.fetch_add(1);
  platform::futex_wake(state);
}

}  // namespace runtime_internal

void Runtime::wait(Waiter &w, bool patient) {
  // Completed by whoever polls (the service thread at least); the thread
  // woken counts as not resumed until it is back here (see service_loop).
  auto sleep_until_done = [&w] {
    if (w.sleep_until_done(platform::futex_wait)) g_woken_not_resumed.fetch_sub(1);
  };
  if (block_waits_) {
    // Sleep at once and leave the core, and the MPI polling, to the threads
    // that have to answer (polling a few times first was slower: lockstress,
    // 8 ranks on 2 cores, docs/service.md).
    if (!w.done()) sleep_until_done();
    return;
  }
  waiting_threads_.fetch_add(1);
  unsigned idle = 0;
  double idle_since = 0;
  bool sleep = false;
  while (!w.done()) {
    int got = 0;
    if (lock_.try_lock()) {
      // One message at a time, and back to the access once w is done: the
      // message after a page grant is often the next rank's request for the
      // same page (under sc: an invalidation), and serving it first takes
      // the page away before this thread used it. With ranks outnumbering
      // cores that became a ping-pong without progress (docs/service.md).
      got = poll_locked(1);
      lock_.unlock();
    }
    if (got) {
      idle = 0;
    } else if (++idle > service_timing::kIdlePollsBeforeYield) {
      if (idle == service_timing::kIdlePollsBeforeYield + 1) idle_since = platform::now_seconds();
      if (patient && (idle & (service_timing::kPatientCheckEvery - 1)) == 0 &&
          platform::now_seconds() - idle_since > service_timing::kPatientSwitch_s) {
        // Idle for a while (2 ms): the wait may be long (a join of a
        // computing thread); the service thread takes over the messages.
        sleep = true;
        break;
      }
      // Nothing to do for a while: another rank may need this core
      // (oversubscribed runs), so give it up briefly.
      platform::thread_yield();
    } else {
      platform::cpu_relax();
    }
  }
  waiting_threads_.fetch_sub(1);
  if (sleep) sleep_until_done();
}

bool Runtime::wait_until(Waiter &w, double deadline) {
  while (!w.done()) {
    if (platform::now_seconds() >= deadline) return w.done();
    int got = 0;
    if (!block_waits_ && lock_.try_lock()) {
      got = poll_locked(1);
      lock_.unlock();
    }
    if (!got)
      platform::sleep_us(block_waits_ ? service_timing::kTimedWaitNapBlock_us : service_timing::kTimedWaitNapSpin_us);
  }
  return true;
}

int Runtime::noted_wait(WaitNote &note, Waiter &w, const std::function<int()> &start, bool patient, double *time_sum) {
  double t0 = platform::now_seconds();
  {
    std::lock_guard<std::mutex> g(lock_);
    if (int status = start()) return status;
    wait_begin(&note, &w);
  }
  wait(w, patient);
  std::lock_guard<std::mutex> g(lock_);
  wait_end(&note);
  if (time_sum) *time_sum += platform::now_seconds() - t0;
  return w.status;
}

int Runtime::timed_sync(WaitNote &note, const std::function<int(Waiter *)> &start, bool patient) {
  Waiter w;
  return noted_wait(
      note, w, [&] { return start(&w); }, patient, &stats_.sync_time_s);
}

int Runtime::sync_op(WaitKind kind, uint64_t object, const std::function<void(Waiter *)> &start, bool patient) {
  WaitNote note{kind, object};
  return timed_sync(
      note,
      [&](Waiter *w) {
        start(w);
        return AGORA_OK;
      },
      patient);
}

}  // namespace agora
