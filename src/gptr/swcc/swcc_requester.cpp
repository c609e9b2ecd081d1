// swcc, the requesting side: the program's accesses, served from this rank's
// copies when their state allows (a software cache hit), else queued on the
// block behind one request to its home.
#include <cstring>

#include "common/log.h"
#include "gptr/swcc/swcc_engine.h"

namespace agora::gptr {

SwccEngine::SwccEngine(Host &host, const Options &options)
    : Engine(host, options), copies_(host.nranks(), options.dir_bits), entries_(1, options.dir_bits) {}

template <typename Fn>
void SwccEngine::for_each_block(const Op &op, Fn fn) {
  uint64_t bs = options_.block_bytes;
  uint64_t first = block_of(op.offset), last = block_of(op.offset + op.size - 1);
  if (first != last) op.signal->issue((int64_t)(last - first));
  for (uint64_t b = first; b <= last; ++b) {
    uint64_t from = std::max(op.offset, b * bs), to = std::min(op.offset + op.size, (b + 1) * bs);
    Op part = op;
    part.offset = from;
    part.size = to - from;
    part.local = op.local + (from - op.offset);
    fn(part, b);
  }
}

bool SwccEngine::copy_serves(const Op &op, const Copy &c) const {
  if (op.kind == OpKind::Read) return c.state != State::Invalid;
  // A store always goes to the home, which counts it (store_sync).
  return op.kind == OpKind::Write && c.state == State::Modified;
}

void SwccEngine::serve_from_copy(const Op &op, Copy &c) {
  std::byte *at = c.data.data() + (op.offset - block_offset(c.block));
  if (op.kind == OpKind::Read)
    std::memcpy(op.local, at, op.size);
  else
    std::memcpy(at, op.local, op.size);
  op.signal->complete();
}

bool SwccEngine::try_now(const Op &op) {
  if (op.size == 0 || block_of(op.offset) != block_of(op.offset + op.size - 1)) return false;
  if (op.home == me_) {
    Entry *e = entries_.find(0, block_of(op.offset));
    if (e && (e->busy || !e->local_waiting.empty() || !home_allows(op, e))) return false;
    count_issue(op);
    serve_local(op);
    return true;
  }
  Copy *c = copies_.find(op.home, block_of(op.offset));
  if (!c || !c->waiting.empty() || !copy_serves(op, *c)) return false;
  count_issue(op);
  counters_.hits++;
  serve_from_copy(op, *c);
  return true;
}

void SwccEngine::issue(const Op &op) {
  count_issue(op);
  if (op.size == 0) return op.signal->complete();
  bool local = op.home == me_;
  bool write = op.kind == OpKind::Write;
  size_t most = std::min<size_t>(64, std::max<size_t>(1, options_.chunk_bytes / options_.block_bytes));
  std::vector<Copy *> run;
  auto flush_run = [&] {
    if (run.size() == 1)
      send_for(*run[0], run[0]->waiting.front());
    else if (!run.empty())
      start_run(Run{run, write, false});
    run.clear();
  };
  for_each_block(op, [&](const Op &part, uint64_t block) {
    if (local) {
      Entry *e = entries_.find(0, block);
      if (!e || (!e->busy && e->local_waiting.empty() && home_allows(part, e))) return serve_local(part);
      counters_.stalls++;
      e->local_waiting.push_back(Queued::of(part));
      opened();
      run_home(*e);
      return;
    }
    Copy &c = *copies_.find_or_create(op.home, block);
    if (c.waiting.empty() && copy_serves(part, c)) {
      counters_.hits++;
      return serve_from_copy(part, c);
    }
    c.waiting.push_back(Queued::of(part));
    opened();
    if (c.waiting.size() > 1 || c.requesting || op.kind == OpKind::Store) {
      if (c.waiting.size() > 1) counters_.stalls++;
      flush_run();
      return run_copy(c);
    }
    // Joins the run of blocks this transfer asks for in one request.
    if (!run.empty() && (run.back()->block + 1 != block || run.size() == most)) flush_run();
    counters_.misses++;
    c.requesting = true;
    run.push_back(&c);
  });
  flush_run();
}

void SwccEngine::start_run(Run run) {
  if (runs_in_flight_ == kRunsInFlight) return runs_waiting_.push_back(std::move(run));
  runs_in_flight_++;
  send_run_now(run);
}

void SwccEngine::send_run_now(const Run &run) {
  Copy &first = *run.copies.front();
  uint64_t at = block_offset(first.block);
  if (!run.write_back) {
    host_.send_request(first.home,
                       MsgHeader{Channel::Gptr, run.write ? kSwccWriteRun : kSwccReadRun, 0, at, run.copies.size(), 0});
    counters_.requests++;
    return;
  }
  std::vector<std::byte> data;
  data.reserve(run.copies.size() * options_.block_bytes);
  for (Copy *c : run.copies) data.insert(data.end(), c->data.begin(), c->data.end());
  host_.send_request(first.home, MsgHeader{Channel::Gptr, kSwccWriteBack, 0, at, run.copies.size(), 0},
                     {data.data(), data.size()});
  counters_.bytes_written += data.size();
}

void SwccEngine::run_finished() {
  runs_in_flight_--;
  if (runs_waiting_.empty()) return;
  Run next = std::move(runs_waiting_.front());
  runs_waiting_.pop_front();
  runs_in_flight_++;
  send_run_now(next);
}

void SwccEngine::on_grant_run(const MsgHeader &m, Payload p) {
  uint64_t first = block_of(m.a), bs = options_.block_bytes;
  const std::byte *data = p.data;
  uint64_t count = m.c >> 8;
  for (uint64_t i = 0; i < count; ++i) {
    Copy *c = copies_.find(m.src, first + i);
    if (!c || !c->requesting || c->writing_back || c->waiting.empty())
      fatal("swcc: run grant of block %llu from rank %d that no request asked for",
            (unsigned long long)block_offset(first + i), m.src);
    if (!(m.b >> i & 1)) {
      send_for(*c, c->waiting.front());  // refused in the run: asked for alone
      continue;
    }
    c->data.assign(data, data + bs);
    data += bs;
    c->state = (State)(m.c & 0xff);
    c->requesting = false;
    counters_.bytes_fetched += bs;
    run_copy(*c);
  }
  run_finished();
}

// Serves the queued accesses the copy's state allows, in order; the first
// one it does not allow sends the request (if none is on its way).
void SwccEngine::run_copy(Copy &c) {
  while (!c.waiting.empty() && !c.requesting) {
    Queued &q = c.waiting.front();
    q.current();
    if (copy_serves(q.op, c)) {
      counters_.hits++;
      serve_from_copy(q.op, c);
      c.waiting.pop_front();
      closed();
      continue;
    }
    counters_.misses++;
    send_for(c, q);
    c.requesting = true;
  }
}

void SwccEngine::send_for(Copy &c, const Queued &q) {
  uint64_t at = block_offset(c.block);
  if (q.op.kind == OpKind::Store) {
    host_.send_request(c.home, MsgHeader{Channel::Gptr, kSwccStore, 0, q.op.offset, q.op.size, 0},
                       {q.data.data(), q.data.size()});
    counters_.bytes_written += q.op.size;
  } else {
    uint16_t want = q.op.kind == OpKind::Read ? kSwccRead : kSwccWrite;
    host_.send_request(c.home, MsgHeader{Channel::Gptr, want, 0, at, 0, 0});
  }
  counters_.requests++;
}

void SwccEngine::on_grant(const MsgHeader &m, Payload p) {
  Copy *c = copies_.find(m.src, block_of(m.a));
  if (!c || !c->requesting || c->writing_back)
    fatal("swcc: grant of block %llu from rank %d that no request asked for", (unsigned long long)m.a, m.src);
  c->data.assign(p.data, p.data + p.size);
  c->state = (State)m.c;
  c->requesting = false;
  counters_.bytes_fetched += p.size;
  run_copy(*c);
}

void SwccEngine::on_nack(const MsgHeader &m) {
  Copy *c = copies_.find(m.src, block_of(m.a));
  if (!c || !c->requesting || c->waiting.empty())
    fatal("swcc: refusal of block %llu from rank %d that no request asked for", (unsigned long long)m.a, m.src);
  counters_.nacks++;
  // Retry (section 2.5). The home is busy with another transaction on it.
  send_for(*c, c->waiting.front());
}

void SwccEngine::on_store_ack(const MsgHeader &m) {
  Copy *c = copies_.find(m.src, block_of(m.a));
  if (!c || !c->requesting || c->waiting.empty() || c->waiting.front().op.kind != OpKind::Store)
    fatal("swcc: store acknowledgement of block %llu from rank %d that no store asked for", (unsigned long long)m.a,
          m.src);
  c->requesting = false;
  c->waiting.front().op.signal->complete();
  c->waiting.pop_front();
  closed();
  run_copy(*c);
}

void SwccEngine::on_invalidate(const MsgHeader &m) {
  Copy *c = copies_.find(m.src, block_of(m.a));
  uint64_t refused = 0;
  if (c && c->state == State::Shared) {
    c->state = State::Invalid;
  } else if (c && (c->writing_back || (c->requesting && c->state == State::Invalid)) &&
             options_.mutation != Mutation::SwccAckInvalidateEarly) {
    // The home counts this rank among the sharers, so its grant is on the
    // way (or the answer to its write-back, which makes it a sharer):
    // acknowledging now would let that copy, stale by then, stay.
    refused = 1;
    counters_.nacks++;
  }
  host_.send(m.src, MsgHeader{Channel::Gptr, kSwccInvalidateAck, 0, m.a, 0, refused});
}

void SwccEngine::on_recall(const MsgHeader &m) {
  Copy *c = copies_.find(m.src, block_of(m.a));
  if (!c || c->state != State::Modified) {
    // The grant that makes this rank the owner is still on its way.
    counters_.nacks++;
    host_.send(m.src, MsgHeader{Channel::Gptr, kSwccRecallReply, 0, m.a, 0, 1});
    return;
  }
  c->state = m.c ? State::Invalid : State::Shared;
  host_.send(m.src, MsgHeader{Channel::Gptr, kSwccRecallReply, 0, m.a, 0, 0}, {c->data.data(), c->data.size()});
  counters_.bytes_written += c->data.size();
}

void SwccEngine::on_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kSwccRead:
    case kSwccWrite:
    case kSwccStore:
      return on_request(m, p);
    case kSwccGrant:
      return on_grant(m, p);
    case kSwccReadRun:
    case kSwccWriteRun:
      return on_run(m);
    case kSwccGrantRun:
      return on_grant_run(m, p);
    case kSwccNack:
      return on_nack(m);
    case kSwccStoreAck:
      return on_store_ack(m);
    case kSwccInvalidate:
      return on_invalidate(m);
    case kSwccInvalidateAck:
      return on_invalidate_ack(m);
    case kSwccRecall:
      return on_recall(m);
    case kSwccRecallReply:
      return on_recall_reply(m, p);
    case kSwccWriteBack:
      return on_write_back(m, p);
    case kSwccWriteBackAck:
      return on_write_back_ack(m);
    default:
      fatal("swcc: unexpected message %u from rank %d", m.op, m.src);
  }
}

void SwccEngine::drain(std::function<void()> done) {
  drained_ = std::move(done);
  check_drained();
}

// Drained once nothing is in flight and no copy is left modified (a request
// that ends with a modified grant is written back after it).
void SwccEngine::check_drained() {
  if (!drained_ || open_) return;
  write_back_all();
  if (open_) return;
  auto done = std::move(drained_);
  drained_ = nullptr;
  done();
}

// Every idle modified copy goes home, runs of consecutive blocks in one
// message; accesses to them wait for the answer (a write made meanwhile
// would otherwise be lost behind the shared copy).
void SwccEngine::write_back_all() {
  size_t most = std::min<size_t>(64, std::max<size_t>(1, options_.chunk_bytes / options_.block_bytes));
  std::vector<Copy *> run;
  auto send = [&] {
    if (!run.empty()) start_run(Run{run, false, true});
    run.clear();
  };
  copies_.for_each([&](Copy &c) {
    if (c.state != State::Modified || c.requesting || !c.waiting.empty()) return;
    if (!run.empty() && (run.back()->home != c.home || run.back()->block + 1 != c.block || run.size() == most)) send();
    c.requesting = c.writing_back = true;
    opened();
    counters_.write_backs++;
    run.push_back(&c);
  });
  send();
}

void SwccEngine::on_write_back_ack(const MsgHeader &m) {
  uint64_t first = block_of(m.a);
  for (uint64_t i = 0; i < m.c; ++i) {
    Copy *c = copies_.find(m.src, first + i);
    if (!c || !c->writing_back)
      fatal("swcc: write-back ack of block %llu from rank %d unasked", (unsigned long long)block_offset(first + i),
            m.src);
    // Not kept: a recall reached this rank first and took the copy already.
    if ((m.b >> i & 1) && c->state == State::Modified) c->state = State::Shared;
    c->requesting = c->writing_back = false;
    closed();
    run_copy(*c);
  }
  run_finished();
}

void SwccEngine::closed() {
  --open_;
  check_drained();
}

}  // namespace agora::gptr
