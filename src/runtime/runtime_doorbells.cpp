// Doorbells (docs/service.md): at start-up every rank learns which service
// threads it can ring (same node, same PID namespace) and with which signal;
// ringing one wakes it from its nap; with AGORA_DEBUG the rings are reported
// at finalize.
#include <string>

#include "common/log.h"
#include "runtime/runtime.h"

namespace agora {

void Runtime::ring(Doorbell &d) {
  d.rings++;
  platform::doorbell_ring(d.pid, d.tid, d.signo);
}

void Runtime::exchange_doorbells() {
  while (service_tid_.load() == 0) platform::cpu_relax();
  // (PID namespace, pid, tid, signal) of every rank. A rank is rung only if
  // MPI puts it on this node and its pid means the same process here.
  std::vector<uint64_t> mine = {platform::pid_namespace_id(), (uint64_t)platform::process_id(),
                               (uint64_t)service_tid_.load(), (uint64_t)platform::doorbell_signal()};
  std::vector<uint64_t> all;
  {
    std::lock_guard<std::mutex> g(lock_);  // MPI is serialised under the lock
    all = transport_.allgather(mine);
  }
  doorbells_.assign(nranks(), Doorbell{});
  std::string rung, node;
  for (Rank r = 0; r < nranks(); ++r) {
    const uint64_t *theirs = &all[4 * r];
    if (transport_.same_node(r)) node.append(" ").append(std::to_string(r));
    if (r == rank() || !transport_.same_node(r) || mine[0] == 0 || theirs[0] != mine[0]) continue;
    doorbells_[r] = {(int)theirs[1], (int)theirs[2], (int)theirs[3]};
    rung.append(" ").append(std::to_string(r));
  }
  log_debug("doorbell: signal %d, same node [%s ], rings [%s ] (same node and PID namespace)",
            platform::doorbell_signal(), node.c_str(), rung.c_str());
}

void Runtime::report_doorbells() {
  if (!log_debug_enabled()) return;
  std::string counts;
  for (Rank r = 0; r < nranks(); ++r)
    if (r != rank())
      counts.append(" ").append(std::to_string(r)).append(":").append(std::to_string(doorbells_[r].rings));
  log_debug("doorbell: rings sent to rank:count [%s ]; application signals handed back %llu",
            counts.c_str(), (unsigned long long)platform::doorbell_signals_handed_back());
}

}  // namespace agora
