#include "runtime/oversubscription.h"

#include <bit>
#include <vector>

#include "platform/platform.h"

namespace agora {

WaitDecision decide_wait_mode(const Config &config, MpiTransport &transport) {
  // The cores this node's ranks may use: the union of their affinity masks
  // (ranks bound to one core each together own as many cores as ranks).
  std::vector<uint64_t> mine;
  bool known = platform::cpu_affinity(&mine);
  int words = (int)mine.size();
  if (!known) mine.assign(words, 0);
  std::vector<uint64_t> all = transport.allgather(mine);
  std::vector<uint64_t> node(words, 0);
  for (Rank r = 0; r < transport.nranks(); ++r)
    if (transport.same_node(r))
      for (int i = 0; i < words; ++i) node[i] |= all[(size_t)r * words + i];
  long cores = 0;
  for (uint64_t w : node) cores += std::popcount(w);
  // The service thread is not counted: it naps when idle. Application
  // threads per rank: the AGORA_THREADS_PER_RANK placement rule.
  long busy = (long)transport.node_nranks() * config.threads_per_rank;
  int oversubscribed = cores > 0 && busy > cores;
  bool any = transport.allreduce_max(oversubscribed) != 0;

  WaitDecision d;
  std::string node_text = std::to_string(transport.node_nranks()) + " ranks x " +
                          std::to_string(config.threads_per_rank) + " threads on this node, " +
                          (cores > 0 ? std::to_string(cores) : std::string("unknown")) + " cores" +
                          (oversubscribed ? ", oversubscribed"
                           : any          ? ", another node oversubscribed"
                                          : "");
  switch (config.wait) {
    case WaitMode::Spin:
      d = {false, "spin (AGORA_WAIT=spin; " + node_text + ")"};
      break;
    case WaitMode::Block:
      d = {true, "block (AGORA_WAIT=block; " + node_text + ")"};
      break;
    case WaitMode::Auto:
      // Measured on 8 and 16 ranks on 2 cores (docs/service.md): waiters that
      // poll one message at a time and yield the core when idle beat
      // sleeping ones 2.5-4x, as every hop to a sleeping rank costs two
      // wake-ups; so auto spins (and yields) even when oversubscribed.
      d = {false, "spin (AGORA_WAIT=auto; " + node_text + ")"};
      break;
  }
  return d;
}

}  // namespace agora
