// A memory server's life after init (docs/memory-servers.md; the split
// into compute ranks and servers, and this rank's role:
// memory_servers/memory_servers.h). A server runs the same init as a
// compute rank (the start-up collectives are over every process), then,
// instead of returning to the program, blocks in the kernel until a
// message rings it (every message to a server rings
// its doorbell: Runtime::send), drains MPI, and blocks again. It costs no CPU
// when idle. Why not block in MPI itself: Open MPI 4.1's blocking calls
// (MPI_Recv, MPI_Waitany) spin in opal_progress over shared memory and TCP
// alike, even with mpi_yield_when_idle (which only adds sched_yield): an idle
// server would burn a core (measured in docs/memory-servers.md).
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"
#include "runtime/service_timing.h"

namespace agora {

void Runtime::serve_as_memory_server() {
  observe_name_thread("agora memory server");
  {
    std::unique_lock<std::mutex> g(lock_);
    // Until every compute rank has finalized (each sends kComputeDone after
    // its last request; messages between two ranks stay in order) and every
    // reply has left.
    while (!servers_.computes_done() || transport_.sends_pending()) {
      // Twice: Open MPI's MPI_Iprobe matches before it progresses, so a
      // message that came with the ring may be seen only by the second probe.
      int got = poll_locked(64);
      if (!got) got = poll_locked(64);
      if (got) continue;
      if (transport_.sends_pending()) {
        // A large reply (rendezvous) completes only as both sides progress
        // MPI; its receiver is waiting for it. Yield the core meanwhile.
        servers_.wakeups().pending_polls++;
        g.unlock();
        platform::thread_yield();
        g.lock();
        continue;
      }
      g.unlock();
      // The hang watch's report (one small message each kHangWatchReport_s)
      // is the only thing a server does unasked; none once the compute ranks
      // finalize (they stop their watch first).
      if (!servers_.any_compute_done()) hang_tick();
      // Sleep in the kernel until rung, or until the next report is due.
      // On one host a ring is a signal and stays pending until taken; the
      // report's wake-up also bounds the delay of a lost datagram (a remote
      // doorbell across hosts).
      bool rung = platform::doorbell_wait((uint32_t)(service_timing::kHangWatchReport_s * 1e6), doorbells_.remote_fd());
      servers_.wakeups().all++;
      if (!rung) servers_.wakeups().idle++;
      g.lock();
    }
  }
  log_debug(
      "memory server: %llu wake-ups (%llu for the hang watch's report, not rung), %llu polls while a "
      "reply was in flight; %llu messages in",
      (unsigned long long)servers_.wakeups().all, (unsigned long long)servers_.wakeups().idle,
      (unsigned long long)servers_.wakeups().pending_polls, (unsigned long long)messages_in_);
  {
    std::lock_guard<std::mutex> g(lock_);
    watch_->stop();
  }
  running_ = false;
  stop_transport();
  // Not exit(): the program's exit handlers are not a server's to run.
  std::fflush(nullptr);
  std::_Exit(0);
}

}  // namespace agora
