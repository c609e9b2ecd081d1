// Memory servers (docs/memory-servers.md; Samhita/RegC §IV, Wong & Rendell §II-B):
// with AGORA_MEMORY_SERVERS=M the last M MPI processes home all global
// memory, striped over them in AGORA_STRIPE chunks, and serve it driven only
// by incoming messages; the program runs on the other N-M ranks, which keep
// their numbers 0..N-M-1. This class owns the job's split into compute
// ranks and servers, this rank's role, the compute ranks' view of the job
// the sync services get, and a server's count of finalized compute ranks
// and its wake-ups. It reaches the rank through ComponentHost (every rank:
// the runtime). A server's serving loop is the runtime's
// (runtime_server.cpp): it is the core's polling and waiting.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "common/config.h"
#include "transport/message.h"

namespace agora {

class MemoryServers {
 public:
  explicit MemoryServers(ComponentHost &all) : all_(all) {}
  MemoryServers(const MemoryServers &) = delete;
  MemoryServers &operator=(const MemoryServers &) = delete;

  // init, after MPI: checks AGORA_MEMORY_SERVERS and AGORA_STRIPE against
  // the job (page_size: the stripe's unit), and decides this rank's role.
  // With servers, AGORA_FETCH=auto becomes messages in *config (pages from
  // a server travel by message). False with *error.
  bool decide(Config *config, size_t page_size, std::string *error);
  // The ranks the program sees (agora_nranks, placement, barriers, locks):
  // all but the memory servers, which are the last ranks.
  Rank compute_nranks() const { return compute_nranks_; }
  bool is_server() const { return server_; }
  bool is_server_rank(Rank r) const { return r >= compute_nranks_; }
  // The sync services' view of the job: the compute ranks only (decide
  // makes it).
  ComponentHost &compute_host() { return *compute_host_; }

  // stop, on a compute rank: tells every server this rank is done.
  void tell_done();
  // A message on Channel::Server (the runtime's lock held).
  void on_message(const MsgHeader &m, Payload p);
  // On a server: until every compute rank has finalized.
  bool computes_done() const { return computes_done_ >= compute_nranks_; }
  bool any_compute_done() const { return computes_done_ != 0; }

  // A server's wake-ups, reported with AGORA_DEBUG: all of them, those for
  // the hang watch's report (not rung), and polls while a reply was in flight.
  struct Wakeups {
    uint64_t all = 0, idle = 0, pending_polls = 0;
  };
  Wakeups &wakeups() { return wakeups_; }

 private:
  ComponentHost &all_;
  Rank compute_nranks_ = 0;
  bool server_ = false;
  Rank computes_done_ = 0;  // on a server: compute ranks that have finalized
  Wakeups wakeups_;
  std::unique_ptr<ComponentHost> compute_host_;
};

}  // namespace agora
