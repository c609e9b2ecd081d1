#include "gptr/order/order_engine.h"

#include <cstring>

#include "common/log.h"

namespace agora::gptr {

OrderEngine::OrderEngine(Host &host, const Options &options) : Engine(host, options) {
  homes_.resize(host.nranks());
  if (ordered()) {
    lines_.resize((size_t)1 << (options_.rank_bits + options_.addr_bits));
    if (caching()) data_.resize(lines_.size() * options_.line_bytes);
  }
}

bool OrderEngine::scalar(const Op &op) const {
  // Within one line (a scalar access always is: widths are aligned and lines
  // are at least 8 bytes).
  uint64_t lb = options_.line_bytes;
  return op.size <= lb && (op.offset & (lb - 1)) + op.size <= lb;
}

uint32_t OrderEngine::line_index(Rank home, uint64_t offset) const {
  uint64_t rank_part = (uint64_t)home & ((1ull << options_.rank_bits) - 1);
  uint64_t addr_part = (offset >> __builtin_ctz(options_.line_bytes)) & ((1ull << options_.addr_bits) - 1);
  return (uint32_t)(rank_part << options_.addr_bits | addr_part);
}

bool OrderEngine::try_now(const Op &op) {
  if (op.home == me_) {
    count_issue(op);
    serve_local(op);
    return true;
  }
  if (op.size == 0) {
    // Nothing to move. (As a "scalar" it would fill its line, which at the
    // end of the allocated extent lies beyond the home's segment.)
    count_issue(op);
    complete(op);
    return true;
  }
  if (!caching() || !scalar(op) || homes_[op.home].fenced || !homes_[op.home].waiting.empty()) return false;
  uint32_t idx = line_index(op.home, op.offset);
  if (!lines_[idx].waiting.empty()) return false;
  Op copy = op;
  if (start_cached(copy, idx, false) != Start::Done) return false;
  count_issue(op);
  return true;
}

void OrderEngine::issue(const Op &op) {
  count_issue(op);
  if (op.home == me_) return serve_local(op);
  if (op.size == 0) return complete(op);  // as in try_now
  if (!ordered()) return send_chunks(op);
  HomeOrder &h = homes_[op.home];
  if (h.fenced || !h.waiting.empty()) {
    counters_.stalls++;
    h.waiting.push_back(Queued::of(op));
    queued_++;
    return;
  }
  dispatch(Queued{op, {}});  // its bytes are copied only if it has to stay
}

// An op whose home is not fenced, in program order after every op before it.
// A write without its own copy of its bytes (q.data empty: they are still
// the caller's, during issue) takes one before it stays.
void OrderEngine::dispatch(Queued q) {
  Op op = q.op;
  HomeOrder &h = homes_[op.home];
  auto owned = [&q] { return q.op.kind == OpKind::Read || !q.data.empty() ? std::move(q) : Queued::of(q.op); };
  if (!scalar(op)) {
    h.fenced = true;
    h.bulk_sent = false;
    h.bulk = owned();
    h.bulk.current();
    queued_++;
    try_send_bulk(op.home);
    return;
  }
  uint32_t idx = line_index(op.home, op.offset);
  Line &l = lines_[idx];
  if (l.waiting.empty()) {
    Start s = start_scalar(op, idx, true);
    if (s != Start::Wait) return;
  }
  counters_.stalls++;
  Queued stays = owned();
  stays.current();
  l.waiting.push_back(std::move(stays));
  h.queued++;
  queued_++;
}

OrderEngine::Start OrderEngine::start_scalar(Op &op, uint32_t idx, bool may_send) {
  return caching() ? start_cached(op, idx, may_send) : start_uncached(op, idx);
}

OrderEngine::Start OrderEngine::start_cached(Op &op, uint32_t idx, bool may_send) {
  Line &l = lines_[idx];
  uint64_t tag = line_tag(op.home, op.offset);
  uint32_t at = (uint32_t)(op.offset & (options_.line_bytes - 1));
  uint64_t mask = (op.size == 64 ? ~0ull : ((1ull << op.size) - 1)) << at;
  std::byte *data = line_data(idx);
  // The outstanding bit holds back a second write to the line (section
  // 2.2.5); the mutation lets it go, as a scheme without the bit would.
  bool write_busy = l.busy && options_.mutation != Mutation::NoOutstandingWriteBit;
  if (op.kind == OpKind::Read) {
    if (l.tag == tag && (l.valid & mask) == mask) {
      std::memcpy(op.local, data + at, op.size);
      counters_.hits++;
      complete(op);
      return Start::Done;
    }
    if (!may_send) return Start::NeedSend;
    if (l.busy) return Start::Wait;
    if (l.tag == tag && (l.dirty & mask)) {
      // Part of what it reads is this rank's own unwritten-back write: the
      // home gets it first, so the fill answers with it.
      write_back(idx, nullptr);
      return Start::Wait;
    }
    if (l.tag != tag && l.dirty) {
      write_back(idx, nullptr);  // evicts; the read fetches once the write is acknowledged
      l.tag = kNoTag;
      l.valid = 0;
      return Start::Wait;
    }
    if (l.tag != tag) {
      l.tag = tag;
      l.valid = l.dirty = 0;
    }
    counters_.misses++;
    Pending p{Pending::Fill, idx, tag, epoch_, 0, true, op};
    send_request(op.home, kReadReq, tag & kOffsetMask, options_.line_bytes, {}, p);
    l.busy = true;
    return Start::Sent;
  }
  if (op.kind == OpKind::Store) {
    // Sent as it is (the home counts exactly its bytes for store_sync); a
    // cached copy takes it, and no longer owes the home those bytes.
    if (!may_send) return Start::NeedSend;
    if (write_busy) return Start::Wait;
    if (l.tag == tag) {
      std::memcpy(data + at, op.local, op.size);
      l.valid |= mask;
      l.dirty &= ~mask;
    }
    Pending p{Pending::ScalarWrite, idx, tag, epoch_, 0, true, op};
    send_request(op.home, kStoreReq, op.offset, op.size, {op.local, op.size}, p);
    l.busy = true;
    return Start::Sent;
  }
  bool through = op.write_through;
  // Into the line; a write-through one goes home now and completes there.
  auto write_into_line = [&] {
    std::memcpy(data + at, op.local, op.size);
    l.valid |= mask;
    l.dirty |= mask;
    if (through) {
      write_back(idx, &op);
      return Start::Sent;
    }
    complete(op);
    return Start::Done;
  };
  if (l.tag == tag) {
    if (through && (!may_send || write_busy)) return may_send ? Start::Wait : Start::NeedSend;
    counters_.hits++;
    return write_into_line();
  }
  if (l.dirty || write_busy) {
    if (!may_send) return Start::NeedSend;
    if (write_busy) return Start::Wait;
    write_back(idx, nullptr);
    l.tag = kNoTag;
    l.valid = 0;
    return Start::Wait;
  }
  if (l.busy || (through && !may_send)) return may_send ? Start::Wait : Start::NeedSend;
  l.tag = tag;  // allocated without a fetch: only the written bytes are valid
  l.valid = l.dirty = 0;
  counters_.misses++;
  return write_into_line();
}

OrderEngine::Start OrderEngine::start_uncached(Op &op, uint32_t idx) {
  Line &l = lines_[idx];
  bool write = op.kind != OpKind::Read;
  if (l.busy && !(write && options_.mutation == Mutation::NoOutstandingWriteBit)) return Start::Wait;
  Pending p{write ? Pending::ScalarWrite : Pending::ScalarRead, idx, 0, epoch_, 0, true, op};
  if (write) {
    bool async = !op.write_through && op.kind == OpKind::Write;
    p.has_op = !async;
    send_request(op.home, op.kind == OpKind::Store ? kStoreReq : kWriteReq, op.offset, op.size, {op.local, op.size}, p);
    if (async) complete(op);
  } else {
    send_request(op.home, kReadReq, op.offset, op.size, {}, p);
  }
  l.busy = true;
  return Start::Sent;
}

void OrderEngine::write_back(uint32_t idx, const Op *completes) {
  Line &l = lines_[idx];
  Pending p{Pending::WriteBack, idx, l.tag, epoch_, 0, completes != nullptr, completes ? *completes : Op{}};
  // A line write carries the mask of its dirty bytes in b.
  send_request(pointer_home(l.tag), kWriteReq, l.tag & kOffsetMask, l.dirty, {line_data(idx), options_.line_bytes}, p);
  counters_.write_backs++;
  l.dirty = 0;
  l.busy = true;
}

uint64_t OrderEngine::send_request(Rank home, uint16_t msg_op, uint64_t a, uint64_t b, Payload payload,
                                   Pending pending) {
  uint64_t id = next_id_++;
  pending_.emplace(id, pending);
  bool line_write = pending.kind == Pending::WriteBack;
  // A line write is masked: its header says so with the top bit of c.
  uint64_t c = id | (line_write ? 1ull << 63 : 0);
  host_.send_request(home, MsgHeader{Channel::Gptr, msg_op, 0, a, b, c}, payload);
  counters_.requests++;
  if (msg_op == kReadReq)
    counters_.bytes_fetched += b;
  else
    counters_.bytes_written += payload.size;
  in_flight_++;
  if (pending.kind != Pending::Chunk) homes_[home].in_flight++;
  return id;
}

void OrderEngine::send_chunks(const Op &op) {
  uint64_t chunk = options_.chunk_bytes;
  uint32_t n = (uint32_t)((op.size + chunk - 1) / chunk);
  if (n == 0) return complete(op);
  uint64_t group = next_id_;  // the first chunk's id names the group
  chunks_left_[group] = n;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t off = (uint64_t)i * chunk, len = std::min<uint64_t>(chunk, op.size - off);
    Pending p{Pending::Chunk, 0, group, epoch_, off, true, op};
    if (op.kind == OpKind::Read)
      send_request(op.home, kReadReq, op.offset + off, len, {}, p);
    else
      send_request(op.home, op.kind == OpKind::Store ? kStoreReq : kWriteReq, op.offset + off, len,
                   {op.local + off, len}, p);
  }
  // A write's bytes are in the messages: direct mode's plain write completes
  // here (the transport keeps it ahead of this rank's later accesses).
  if (!ordered() && op.kind == OpKind::Write && !op.write_through) {
    pending_.at(group).has_op = false;
    for (uint64_t id = group + 1; id < group + n; ++id) pending_.at(id).has_op = false;
    complete(op);
  }
}

void OrderEngine::try_send_bulk(Rank home) {
  HomeOrder &h = homes_[home];
  if (!h.fenced || h.bulk_sent || h.in_flight || h.queued) return;
  // Every line of this home written back first.
  bool wrote = false;
  for (uint32_t i = 0; caching() && i < lines_.size(); ++i) {
    Line &l = lines_[i];
    if (l.tag != kNoTag && pointer_home(l.tag) == home && l.dirty && !l.busy) {
      write_back(i, nullptr);
      wrote = true;
    }
  }
  if (wrote) return;
  h.bulk_sent = true;
  const Op &op = h.bulk.op;
  if (op.kind != OpKind::Read) refresh_cached(home, op);  // they now hold the bytes written
  send_chunks(op);
}

// The cached bytes of home that op covers take op's bytes (the dirty ones
// stay: they are this rank's later writes).
void OrderEngine::refresh_cached(Rank home, const Op &op) {
  for (uint32_t i = 0; caching() && i < lines_.size(); ++i) {
    Line &l = lines_[i];
    if (l.tag == kNoTag || pointer_home(l.tag) != home) continue;
    uint64_t base = l.tag & kOffsetMask;
    for (uint32_t b = 0; b < options_.line_bytes; ++b) {
      uint64_t at = base + b;
      if (at >= op.offset && at < op.offset + op.size && (l.valid >> b & 1) && !(l.dirty >> b & 1))
        line_data(i)[b] = op.local[at - op.offset];
    }
  }
}

void OrderEngine::bulk_done(Rank home) {
  HomeOrder &h = homes_[home];
  if (h.bulk.op.kind == OpKind::Read) refresh_cached(home, h.bulk.op);  // they now hold what was read
  h.fenced = false;
  h.bulk = {};
  queued_--;
  release_home(home);
}

// The fence is down: the ops that waited for it go, in order, until one of
// them fences the home again.
void OrderEngine::release_home(Rank home) {
  HomeOrder &h = homes_[home];
  while (!h.fenced && !h.waiting.empty()) {
    Queued q = std::move(h.waiting.front());
    h.waiting.pop_front();
    queued_--;
    q.current();
    dispatch(std::move(q));
  }
}

void OrderEngine::run_line(uint32_t idx) {
  Line &l = lines_[idx];
  while (!l.waiting.empty()) {
    Queued &q = l.waiting.front();
    q.current();
    Start s = start_scalar(q.op, idx, true);
    if (s == Start::Wait) break;
    homes_[q.op.home].queued--;
    queued_--;
    Rank home = q.op.home;
    l.waiting.erase(l.waiting.begin());
    try_send_bulk(home);
  }
  if (draining_ && caching() && l.waiting.empty() && !l.busy && l.dirty) write_back(idx, nullptr);
}

void OrderEngine::on_message(const MsgHeader &m, Payload p) {
  if (m.op == kReadReq || m.op == kWriteReq || m.op == kStoreReq) {
    // A line write carries its dirty-byte mask in b.
    bool masked = m.c >> 63;
    serve_request(m, p, m.b, m.c & ~(1ull << 63), masked);
    return;
  }
  if (m.op != kReadReply && m.op != kWriteAck) fatal("gptr: unexpected message %u from rank %d", m.op, m.src);
  Pending pd = take_request(pending_, m);
  in_flight_--;
  Rank home = m.src;
  if (pd.kind != Pending::Chunk) homes_[home].in_flight--;
  switch (pd.kind) {
    case Pending::Fill: {
      Line &l = lines_[pd.line];
      l.busy = false;
      uint32_t at = (uint32_t)(pd.op.offset & (options_.line_bytes - 1));
      std::memcpy(pd.op.local, p.data + at, pd.op.size);
      if (l.tag == pd.tag && pd.epoch == epoch_) {
        copy_masked(line_data(pd.line), p.data, options_.line_bytes, ~l.dirty);
        l.valid = ~0ull >> (64 - options_.line_bytes);
      }
      complete(pd.op);
      run_line(pd.line);
      break;
    }
    case Pending::WriteBack:
    case Pending::ScalarWrite:
    case Pending::ScalarRead: {
      lines_[pd.line].busy = false;
      if (pd.kind == Pending::ScalarRead) std::memcpy(pd.op.local, p.data, pd.op.size);
      if (pd.has_op) complete(pd.op);
      run_line(pd.line);
      break;
    }
    case Pending::Chunk: {
      if (pd.op.kind == OpKind::Read) std::memcpy(pd.op.local + pd.op_offset, p.data, p.size);
      auto g = chunks_left_.find(pd.tag);
      if (--g->second == 0) {
        chunks_left_.erase(g);
        if (pd.has_op) complete(pd.op);
        if (ordered()) bulk_done(home);
      }
      break;
    }
  }
  try_send_bulk(home);
  check_drain();
}

void OrderEngine::drain(std::function<void()> done) {
  draining_ = true;
  drained_ = std::move(done);
  for (uint32_t i = 0; caching() && i < lines_.size(); ++i)
    if (lines_[i].dirty && !lines_[i].busy && lines_[i].waiting.empty()) write_back(i, nullptr);
  check_drain();
}

void OrderEngine::check_drain() {
  if (!draining_ || in_flight_ || queued_) return;
  for (uint32_t i = 0; caching() && i < lines_.size(); ++i)
    if (lines_[i].dirty) {
      write_back(i, nullptr);
      return;
    }
  draining_ = false;
  auto done = std::move(drained_);
  drained_ = nullptr;
  done();
}

void OrderEngine::acquire() {
  epoch_++;
  for (Line &l : lines_) {
    l.valid = l.dirty;
    if (!l.dirty && !l.busy) l.tag = kNoTag;
  }
}

}  // namespace agora::gptr
