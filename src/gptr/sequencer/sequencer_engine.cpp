#include "gptr/sequencer/sequencer_engine.h"

#include <algorithm>

#include "common/log.h"

namespace agora::gptr {

SequencerEngine::SequencerEngine(Host &host, const Options &options)
    : Engine(host, options), outbound_(host.nranks(), 0), inbound_(host.nranks(), 0), early_(host.nranks()) {}

bool SequencerEngine::try_now(const Op &op) {
  if (op.home != me_) return false;
  count_issue(op);
  serve_local(op);
  return true;
}

void SequencerEngine::issue(const Op &op) {
  count_issue(op);
  if (op.home == me_) return serve_local(op);
  uint64_t chunk = options_.chunk_bytes;
  uint32_t n = (uint32_t)std::max<uint64_t>(1, (op.size + chunk - 1) / chunk);
  uint64_t group = next_id_;
  chunks_left_[group] = n;
  // A plain write completes at issue: its bytes are in the messages, and the
  // home applies them before any later request of this rank.
  bool async_write = op.kind == OpKind::Write && !op.write_through;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t off = (uint64_t)i * chunk, len = std::min<uint64_t>(chunk, op.size - off);
    uint64_t id = next_id_++;
    pending_.emplace(id, Pending{op, off, !async_write, group});
    uint32_t seq = outbound_[op.home]++;
    uint16_t msg = op.kind == OpKind::Read ? kReadReq : op.kind == OpKind::Store ? kStoreReq : kWriteReq;
    Payload payload = op.kind == OpKind::Read ? Payload{} : Payload{op.local + off, len};
    host_.send_request(op.home, MsgHeader{Channel::Gptr, msg, 0, op.offset + off, len | (uint64_t)seq << 32, id},
                       payload);
    counters_.requests++;
    if (op.kind == OpKind::Read)
      counters_.bytes_fetched += len;
    else
      counters_.bytes_written += len;
  }
  if (async_write) op.signal->complete();
}

void SequencerEngine::on_message(const MsgHeader &m, Payload p) {
  if (m.op == kReadReq || m.op == kWriteReq || m.op == kStoreReq) {
    uint32_t seq = (uint32_t)(m.b >> 32);
    uint32_t &expected = inbound_[m.src];
    if (seq != expected && options_.mutation != Mutation::NoReorderBuffer) {
      // Early: buffered until its predecessors have been applied.
      counters_.out_of_order++;
      early_[m.src].emplace(seq, Early{m, std::vector<std::byte>(p.data, p.data + p.size)});
      buffered_++;
      counters_.reorder_depth_max = std::max<uint64_t>(counters_.reorder_depth_max, early_[m.src].size());
      return;
    }
    apply(m, p);  // the fast path: in order, never buffered
    expected++;
    auto &early = early_[m.src];
    for (auto it = early.begin(); it != early.end() && it->first == expected; it = early.erase(it)) {
      apply(it->second.header, {it->second.payload.data(), it->second.payload.size()});
      buffered_--;
      expected++;
    }
    return;
  }
  if (m.op != kReadReply && m.op != kWriteAck) fatal("gptr: unexpected message %u from rank %d", m.op, m.src);
  Pending pd = take_request(pending_, m);
  if (m.op == kReadReply) std::copy(p.data, p.data + p.size, pd.op.local + pd.op_offset);
  auto g = chunks_left_.find(pd.group);
  if (--g->second == 0) {
    chunks_left_.erase(g);
    if (pd.has_op) pd.op.signal->complete();
  }
  check_drain();
}

void SequencerEngine::apply(const MsgHeader &m, Payload p) { serve_request(m, p, m.b & 0xffffffffu, m.c, false); }

void SequencerEngine::drain(std::function<void()> done) {
  drained_ = std::move(done);
  check_drain();
}

void SequencerEngine::check_drain() {
  if (!drained_ || !pending_.empty()) return;
  auto done = std::move(drained_);
  drained_ = nullptr;
  done();
}

}  // namespace agora::gptr
