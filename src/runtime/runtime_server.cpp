// Memory servers (docs/memory-servers.md; paper 000 §IV, paper 004 §II-B):
// with AGORA_MEMORY_SERVERS=M the last M MPI processes home all global
// memory, striped over them in AGORA_STRIPE chunks, and serve it driven only
// by incoming messages; the program runs on the other N-M ranks, which keep
// their numbers 0..N-M-1.
//
// A server runs the same init as a compute rank (the start-up collectives
// are over every process), then, instead of returning to the program, blocks
// in the kernel until a message rings it (every message to a server rings
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

namespace {

// Channel::Server's operations.
enum ServerOp : uint16_t {
  kComputeDone = 1,  // a compute rank has finalized: it sends nothing more
};

// The sync services' view of the job: the compute ranks only (locks,
// barriers, reductions and threads count and place over them), while the
// engine and the hang watch (the runtime itself) address every rank.
class ComputeRanksHost final : public ComponentHost {
 public:
  ComputeRanksHost(ComponentHost &all, Rank compute) : all_(all), compute_(compute) {}
  Rank rank() const override { return all_.rank(); }
  Rank nranks() const override { return compute_; }
  void send(Rank dst, MsgHeader header, Payload payload) override { all_.send(dst, header, payload); }
  void send_request(Rank dst, MsgHeader header, Payload payload) override {
    all_.send_request(dst, header, payload);
  }
  void send_control(Rank dst, MsgHeader header, Payload payload) override {
    all_.send_control(dst, header, payload);
  }
  Stats &stats() override { return all_.stats(); }

 private:
  ComponentHost &all_;
  Rank compute_;
};

}  // namespace

bool Runtime::decide_memory_servers(std::string *error) {
  const Rank n = transport_.nranks();
  const Rank m = (Rank)config_.memory_servers;
  compute_nranks_ = n;
  if (m > 0) {
    if (m >= n) {
      *error = "AGORA_MEMORY_SERVERS=" + std::to_string(m) + " leaves no compute rank: the job has " +
               std::to_string(n) + " process" + (n == 1 ? "" : "es") +
               "; at most N-1 of N can be memory servers (agorarun -n N --memory-servers M)";
      return false;
    }
    if (config_.stripe_bytes % platform::kPageSize != 0) {
      *error = "AGORA_STRIPE=" + std::to_string(config_.stripe_bytes) + " is not a multiple of the page size (" +
               std::to_string(platform::kPageSize) + " bytes)";
      return false;
    }
    if (config_.fetch == FetchMode::OneSided) {
      *error = "AGORA_FETCH=one-sided does not work with memory servers: a server sleeps until a message "
               "rings it, and Open MPI's one-sided reads may need the target to progress; use "
               "AGORA_FETCH=auto or messages";
      return false;
    }
    // Pages from a server travel by message (see above); auto means that here.
    config_.fetch = FetchMode::Messages;
    compute_nranks_ = n - m;
    memory_server_ = rank() >= compute_nranks_;
  }
  compute_host_ = std::make_unique<ComputeRanksHost>(*this, compute_nranks_);
  if (m > 0)
    log_debug("memory servers: ranks %d..%d home global memory in %llu-byte stripes; this rank %s", (int)(n - m),
              (int)(n - 1), (unsigned long long)config_.stripe_bytes,
              memory_server_ ? "is one" : "computes");
  return true;
}

void Runtime::tell_servers_done() {
  for (Rank s = compute_nranks_; s < nranks(); ++s) send(s, {Channel::Server, kComputeDone, 0, 0, 0, 0});
}

void Runtime::on_server_message(const MsgHeader &m, Payload p) {
  (void)p;
  if (!memory_server_ || m.op != kComputeDone)
    fatal("memory-server message %u from rank %d at rank %d (%s)", (unsigned)m.op, m.src, rank(),
          memory_server_ ? "unknown operation" : "not a memory server");
  computes_done_++;
}

void Runtime::serve_as_memory_server() {
  observe_name_thread("agora memory server");
  {
    std::unique_lock<std::mutex> g(lock_);
    // Until every compute rank has finalized (each sends kComputeDone after
    // its last request; messages between two ranks stay in order) and every
    // reply has left.
    while (computes_done_ < compute_nranks_ || transport_.sends_pending()) {
      // Twice: Open MPI's MPI_Iprobe matches before it progresses, so a
      // message that came with the ring may be seen only by the second probe.
      int got = poll_locked(64);
      if (!got) got = poll_locked(64);
      if (got) continue;
      if (transport_.sends_pending()) {
        // A large reply (rendezvous) completes only as both sides progress
        // MPI; its receiver is waiting for it. Yield the core meanwhile.
        server_pending_polls_++;
        g.unlock();
        platform::thread_yield();
        g.lock();
        continue;
      }
      g.unlock();
      // The hang watch's report (one small message each kHangWatchReport_s)
      // is the only thing a server does unasked; none once the compute ranks
      // finalize (they stop their watch first).
      if (computes_done_ == 0) hang_tick();
      // Sleep in the kernel until rung, or until the next report is due.
      // On one host a ring is a signal and stays pending until taken; the
      // report's wake-up also bounds the delay of a lost datagram (a remote
      // doorbell across hosts).
      bool rung = platform::doorbell_wait((uint32_t)(service_timing::kHangWatchReport_s * 1e6),
                                          doorbells_.remote_fd());
      server_wakeups_++;
      if (!rung) server_idle_wakeups_++;
      g.lock();
    }
  }
  log_debug("memory server: %llu wake-ups (%llu for the hang watch's report, not rung), %llu polls while a "
            "reply was in flight; %llu messages in",
            (unsigned long long)server_wakeups_, (unsigned long long)server_idle_wakeups_,
            (unsigned long long)server_pending_polls_,
            (unsigned long long)messages_in_);
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
