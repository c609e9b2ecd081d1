#include "sim/sim_cluster.h"

#include "common/log.h"

namespace agora {

SimNode::SimNode(SimCluster &cluster, Rank rank, const std::string &protocol)
    : cluster_(cluster), rank_(rank), locks_(*this), barrier_(*this), reduce_(*this),
      thread_barriers_(*this, [this](uint64_t object) { return manager_of(object); }),
      semaphores_(*this, [this](uint64_t object) { return manager_of(object); }),
      thread_reductions_(*this, [this](uint64_t object) { return manager_of(object); }) {
  const SimOptions &o = cluster.options();
  frames_.assign(o.pages * o.page_size, std::byte{0});
  access_.assign(o.pages, Access::None);
  engine_ = protocol_create(protocol, *this, o.engine);
  if (!engine_) fatal("simulator: unknown protocol %s", protocol.c_str());
  for (PageId p = 0; p < o.pages; ++p)
    if (home_of(p) == rank) access_[p] = engine_->home_access();  // as the runtime opens home pages
  locks_.attach(engine_.get());
  barrier_.attach(engine_.get());
  thread_barriers_.attach(engine_.get());
  semaphores_.attach(engine_.get());
}

void SimNode::set_access(PageId page, Access access) {
  if (cluster_.options().ignore_downgrades && access < access_[page]) return;
  access_[page] = access;
}

Rank SimNode::nranks() const { return cluster_.options().nodes; }
size_t SimNode::page_size() const { return cluster_.options().page_size; }
Rank SimNode::home_of(PageId page) const {
  // Cyclic homes, shifted by the seed so every node is home to different pages across seeds.
  return (Rank)((page + cluster_.options().seed) % (uint64_t)cluster_.options().nodes);
}

void SimNode::send(Rank dst, MsgHeader header, Payload payload) {
  header.src = rank_;
  stats_.messages_sent++;
  stats_.bytes_sent += sizeof header + payload.size;
  cluster_.post(rank_, dst, header, payload);
}

void SimNode::deliver(const MsgHeader &m, Payload p) {
  switch (m.channel) {
    case Channel::Protocol: engine_->on_message(m, p); break;
    case Channel::Lock: locks_.on_message(m, p); break;
    case Channel::Barrier: barrier_.on_message(m, p); break;
    case Channel::Reduce: reduce_.on_message(m, p); break;
    case Channel::ThreadBarrier: thread_barriers_.on_message(m, p); break;
    case Channel::Semaphore: semaphores_.on_message(m, p); break;
    case Channel::ThreadReduce: thread_reductions_.on_message(m, p); break;
    default: fatal("simulator: message on unexpected channel %u", (unsigned)m.channel);
  }
}

SimCluster::SimCluster(const SimOptions &options) : options_(options), rng_(options.seed) {
  for (Rank r = 0; r < options.nodes; ++r)
    nodes_.push_back(std::make_unique<SimNode>(*this, r, options.protocol));
}

void SimCluster::post(Rank src, Rank dst, const MsgHeader &m, Payload p) {
  channels_[{src, dst}].push_back({m, std::vector<std::byte>(p.data, p.data + p.size)});
  ++in_flight_;
}

bool SimCluster::deliver_one() {
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
  Rank dst = it->first.second;
  nodes_[dst]->deliver(pkt.header, {pkt.payload.data(), pkt.payload.size()});
  return true;
}

bool SimNode::sole_application_thread() const { return cluster_.options().application_threads == 1; }

}  // namespace agora
