// Memory servers (memory_servers.h, docs/memory-servers.md): the job's split
// into compute ranks and servers, the compute ranks' view of the job, and
// Channel::Server's one message.
#include "runtime/memory_servers/memory_servers.h"

#include "common/log.h"

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
  void send_request(Rank dst, MsgHeader header, Payload payload) override { all_.send_request(dst, header, payload); }
  void send_control(Rank dst, MsgHeader header, Payload payload) override { all_.send_control(dst, header, payload); }
  Stats &stats() override { return all_.stats(); }

 private:
  ComponentHost &all_;
  Rank compute_;
};

}  // namespace

bool MemoryServers::decide(Config *config, size_t page_size, std::string *error) {
  const Rank n = all_.nranks();
  const Rank m = (Rank)config->memory_servers;
  compute_nranks_ = n;
  if (m > 0) {
    if (m >= n) {
      *error = "AGORA_MEMORY_SERVERS=" + std::to_string(m) + " leaves no compute rank: the job has " +
               std::to_string(n) + " process" + (n == 1 ? "" : "es") +
               "; at most N-1 of N can be memory servers (agorarun -n N --memory-servers M)";
      return false;
    }
    if (config->stripe_bytes % page_size != 0) {
      *error = "AGORA_STRIPE=" + std::to_string(config->stripe_bytes) + " is not a multiple of the page size (" +
               std::to_string(page_size) + " bytes)";
      return false;
    }
    if (config->fetch == FetchMode::OneSided) {
      *error =
          "AGORA_FETCH=one-sided does not work with memory servers: a server sleeps until a message "
          "rings it, and Open MPI's one-sided reads may need the target to progress; use "
          "AGORA_FETCH=auto or messages";
      return false;
    }
    // Pages from a server travel by message (see above); auto means that here.
    config->fetch = FetchMode::Messages;
    compute_nranks_ = n - m;
    server_ = all_.rank() >= compute_nranks_;
  }
  compute_host_ = std::make_unique<ComputeRanksHost>(all_, compute_nranks_);
  if (m > 0)
    log_debug("memory servers: ranks %d..%d home global memory in %llu-byte stripes; this rank %s", (int)(n - m),
              (int)(n - 1), (unsigned long long)config->stripe_bytes, server_ ? "is one" : "computes");
  return true;
}

void MemoryServers::tell_done() {
  for (Rank s = compute_nranks_; s < all_.nranks(); ++s) all_.send(s, {Channel::Server, kComputeDone, 0, 0, 0, 0});
}

void MemoryServers::on_message(const MsgHeader &m, Payload p) {
  (void)p;
  if (!server_ || m.op != kComputeDone)
    fatal("memory-server message %u from rank %d at rank %d (%s)", (unsigned)m.op, m.src, all_.rank(),
          server_ ? "unknown operation" : "not a memory server");
  computes_done_++;
}

}  // namespace agora
