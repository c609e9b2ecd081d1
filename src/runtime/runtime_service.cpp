// The service thread: serves this rank's messages while no application
// thread waits inside the library, spinning after activity and napping when
// idle (AGORA_SERVICE), or, with AGORA_WAIT=block, serving every message and
// sleeping until rung (docs/service.md).
#include <algorithm>

#include "observe/observe.h"
#include "runtime/runtime.h"
#include "runtime/runtime_internal.h"
#include "runtime/service_timing.h"

namespace agora {

using namespace runtime_internal;

void Runtime::service_loop() {
  platform::thread_reduce_timer_slack();
  platform::doorbell_block();
  service_tid_.store(platform::thread_id());
  observe_name_thread("agora service");
  uint32_t nap_us = service_timing::kFirstNap_us;
  while (running_.load(std::memory_order_relaxed)) {
    hang_tick();
    if (!block_waits_ && waiting_threads_.load(std::memory_order_relaxed) > 0) {
      // A waiting application thread polls for this rank; keep off its core.
      // The thread may stop waiting and compute at any moment, and a request
      // that comes then must not wait out a long nap (jacobi under sc: a
      // fixed 1 ms nap here gave ~1 ms faults at every iteration): nap
      // doubling from kWaitingFirstNap_us, so the service is back within
      // about the time the wait has lasted. Rings do not end this nap: while
      // the thread waits it serves them, and waking for each cost an idle
      // remote read fault ~5 us (2 cores, every core busy).
      nap_us = std::max(nap_us, service_timing::kWaitingFirstNap_us);
      platform::sleep_us(nap_us);
      nap_us = std::min(nap_us * 2, config_.service_sleep_us);
      continue;
    }
    if (block_waits_) {
      // Let threads just woken make the access they waited for (bounded: a
      // thread the scheduler keeps off the cores must not stop the service).
      for (int i = 0; i < service_timing::kWokenHoldNaps && g_woken_not_resumed.load(std::memory_order_relaxed) > 0;
           ++i)
        platform::sleep_us(service_timing::kWokenHoldNap_us);
    }
    int got = 0;
    if (block_waits_) {
      // Nobody else polls: wait for the lock (held briefly by a thread
      // starting an operation) rather than skip the round. Probe twice
      // before sleeping: Open MPI's MPI_Iprobe (ob1) matches before it
      // progresses, so a message that arrived with the ring is only seen by
      // the second probe. One message per round, so that the hold above
      // comes between a grant and the next message.
      std::lock_guard<std::mutex> g(lock_);
      got = poll_locked(1);
      if (!got) got = poll_locked(1);
    } else if (lock_.try_lock()) {
      got = poll_locked();
      lock_.unlock();
    }
    if (got) {
      observe_service_served(got);
      nap_us = service_timing::kFirstNap_us;  // busy: come straight back
      continue;
    }
    if (config_.service == ServiceMode::Poll) {
      platform::cpu_relax();
      continue;
    }
    if (every_rank_rung_) {
      // Every message to this rank rings: sleep until one does (a ring
      // during the poll above stays pending and ends the wait at once).
      observe_service_nap(config_.service_sleep_us, platform::doorbell_wait(config_.service_sleep_us));
      continue;
    }
    // Idle: nap, longer each time, so a computing thread on this core loses
    // little; the first naps after activity are short, for bursts.
    // A datagram on the remote doorbell ends the nap as a ring does (it may
    // come before the request it announces: the naps restart short).
    int remote_doorbell = doorbells_.remote_fd();
    if (observe_service_nap(nap_us, platform::doorbell_wait(nap_us, remote_doorbell)))
      nap_us = service_timing::kFirstNap_us;  // rung: a request is on its way
    else
      nap_us = std::min(nap_us * 2, config_.service_sleep_us);
  }
}

}  // namespace agora
