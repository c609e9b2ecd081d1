#include "sim/sim_network.h"

namespace agora {

void SimNetwork::post(Rank src, Rank dst, const MsgHeader &m, Payload p) {
  if (reorder_pairs_) {
    loose_.push_back({dst, {m, std::vector<std::byte>(p.data, p.data + p.size)}});
    ++in_flight_;
    return;
  }
  channels_[{src, dst}].push_back({m, std::vector<std::byte>(p.data, p.data + p.size)});
  ++in_flight_;
}

void SimNetwork::post_steps(std::deque<std::function<void()>> steps) {
  if (steps.empty()) return;
  in_flight_ += steps.size();
  sequences_[next_sequence_++] = std::move(steps);
}

bool SimNetwork::deliver_one(const Deliver &deliver) {
  if (in_flight_ == 0) return false;
  if (!loose_.empty()) {
    size_t pick = rng_() % loose_.size();
    std::swap(loose_[pick], loose_.back());
    auto [dst, pkt] = std::move(loose_.back());
    loose_.pop_back();
    --in_flight_;
    ++delivered_;
    deliver(dst, pkt.header, {pkt.payload.data(), pkt.payload.size()});
    return true;
  }
  // Without sequences the pick is what it always was (seeds replay as before).
  size_t pick = rng_() % (channels_.size() + sequences_.size());
  if (pick < channels_.size()) {
    auto it = channels_.begin();
    // Walk from a random channel to the first non-empty one (deterministic order).
    std::advance(it, pick);
    for (size_t i = 0; i < channels_.size(); ++i) {
      if (!it->second.empty()) break;
      if (++it == channels_.end()) it = channels_.begin();
    }
    if (!it->second.empty() && it->first == slow_pair_ && rng_() % 16 != 0) {
      // The slow link yields to any other channel with a message.
      auto other = it;
      for (size_t i = 1; i < channels_.size(); ++i) {
        if (++other == channels_.end()) other = channels_.begin();
        if (!other->second.empty()) {
          it = other;
          break;
        }
      }
    }
    if (!it->second.empty()) {
      Packet pkt = std::move(it->second.front());
      it->second.pop_front();
      --in_flight_;
      ++delivered_;
      deliver(it->first.second, pkt.header, {pkt.payload.data(), pkt.payload.size()});
      return true;
    }
    pick = channels_.size();  // no message in flight: a step is
  }
  auto seq = sequences_.begin();
  std::advance(seq, pick - channels_.size());
  std::function<void()> step = std::move(seq->second.front());
  seq->second.pop_front();
  if (seq->second.empty()) sequences_.erase(seq);
  --in_flight_;
  step();
  return true;
}

}  // namespace agora
