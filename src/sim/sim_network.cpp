#include "sim/sim_network.h"

namespace agora {

void SimNetwork::post(Rank src, Rank dst, const MsgHeader &m, Payload p) {
  channels_[{src, dst}].push_back({m, std::vector<std::byte>(p.data, p.data + p.size)});
  ++in_flight_;
}

bool SimNetwork::deliver_one(const Deliver &deliver) {
  if (in_flight_ == 0) return false;
  size_t pick = rng_() % channels_.size();
  auto it = channels_.begin();
  // Walk from a random channel to the first non-empty one (deterministic order).
  std::advance(it, pick);
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (!it->second.empty()) break;
    if (++it == channels_.end()) it = channels_.begin();
  }
  Packet pkt = std::move(it->second.front());
  it->second.pop_front();
  --in_flight_;
  ++delivered_;
  deliver(it->first.second, pkt.header, {pkt.payload.data(), pkt.payload.size()});
  return true;
}

}  // namespace agora
