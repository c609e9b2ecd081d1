// swcc, the home's side: the directory of this rank's blocks that other
// ranks asked for, one transaction at a time per block (SWCC Split-C section
// 2.4, figure 4), and the home's own accesses to its blocks.
#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "gptr/swcc/swcc_engine.h"

namespace agora::gptr {

// The home's segment is current unless another rank holds the block
// modified; the home may write it when no other rank holds a copy.
bool SwccEngine::home_allows(const Op &op, const Entry *e) const {
  if (!e) return true;
  if (op.kind == OpKind::Read) return e->state != State::Modified;
  return e->state == State::Invalid;
}

void SwccEngine::run_home(Entry &e) {
  while (!e.busy && !e.local_waiting.empty()) {
    Queued &q = e.local_waiting.front();
    q.current();
    if (!home_allows(q.op, &e)) {
      begin(e, q.op.kind == OpKind::Read ? Entry::Want::LocalRead : Entry::Want::LocalWrite, me_);
      continue;  // finished at once, or busy now
    }
    serve_local(q.op);
    e.local_waiting.pop_front();
    closed();
  }
}

void SwccEngine::on_request(const MsgHeader &m, Payload p) {
  uint64_t block = block_of(m.a);
  Entry &e = *entries_.find_or_create(0, block);
  if (e.busy) {
    host_.send(m.src, MsgHeader{Channel::Gptr, kSwccNack, 0, m.a, 0, 0});
    return;
  }
  Entry::Want want = m.op == kSwccRead    ? Entry::Want::Read
                     : m.op == kSwccWrite ? Entry::Want::Write
                                          : Entry::Want::Store;
  if (want == Entry::Want::Store) {
    e.store.assign(p.data, p.data + p.size);
    e.store_offset = m.a;
  }
  begin(e, want, m.src);
}

// Grants at once every block of the run that needs no invalidation, recall
// or wait; the requester asks for the others alone.
void SwccEngine::on_run(const MsgHeader &m) {
  bool write = m.op == kSwccWriteRun;
  uint64_t first = block_of(m.a), mask = 0;
  std::vector<std::byte> blocks;
  for (uint64_t i = 0; i < m.b; ++i) {
    Entry &e = *entries_.find_or_create(0, first + i);
    bool only_requester = e.sharers.empty() || (e.sharers.size() == 1 && e.sharers[0] == m.src);
    bool grant = !e.busy && (write ? e.state == State::Invalid || (e.state == State::Shared && only_requester)
                                   : e.state != State::Modified);
    if (!grant) continue;
    mask |= 1ull << i;
    if (write) {
      e.sharers.clear();
      e.state = State::Modified;
      e.owner = m.src;
    } else {
      if (std::find(e.sharers.begin(), e.sharers.end(), m.src) == e.sharers.end()) e.sharers.push_back(m.src);
      e.state = State::Shared;
    }
    const std::byte *at = home_block(e.block);
    blocks.insert(blocks.end(), at, at + options_.block_bytes);
  }
  host_.send(m.src,
             MsgHeader{Channel::Gptr, kSwccGrantRun, 0, m.a, mask,
                       (uint64_t)(write ? State::Modified : State::Shared) | m.b << 8},
             {blocks.data(), blocks.size()});
}

void SwccEngine::begin(Entry &e, Entry::Want want, Rank requester) {
  e.want = want;
  e.requester = requester;
  e.busy = true;
  bool read = want == Entry::Want::Read || want == Entry::Want::LocalRead;
  uint64_t at = block_offset(e.block);
  // A store from the owner itself recalls its copy too: the home applies the
  // store over the owner's writes.
  if (e.state == State::Modified && (e.owner != requester || want == Entry::Want::Store)) {
    // Flush from the owner: a reader leaves it a shared copy (section 2.6.2).
    host_.send_request(e.owner, MsgHeader{Channel::Gptr, kSwccRecall, 0, at, 0, read ? 0u : 1u});
    counters_.recalls++;
    return;
  }
  if (!read && e.state == State::Shared) {
    // A writer (or the home, or a store) needs every other copy gone first.
    e.acks_left = 0;
    for (Rank r : e.sharers) {
      if (r == requester && want == Entry::Want::Write) continue;
      host_.send_request(r, MsgHeader{Channel::Gptr, kSwccInvalidate, 0, at, 0, 0});
      counters_.invalidations++;
      e.acks_left++;
    }
    if (e.acks_left) return;
  }
  finish(e);
}

// An owner's write-back at a release. Kept only while the home still records
// that rank as the owner and no transaction is under way; otherwise a recall
// is taking (or took) the block from it, and that recall's answer carries the data.
void SwccEngine::on_write_back(const MsgHeader &m, Payload p) {
  uint64_t first = block_of(m.a), mask = 0, bs = options_.block_bytes;
  for (uint64_t i = 0; i < m.b; ++i) {
    Entry *e = entries_.find(0, first + i);
    if (!e || e->busy || e->state != State::Modified || e->owner != m.src) continue;
    std::memcpy(home_block(e->block), p.data + i * bs, bs);
    e->state = State::Shared;
    e->sharers.assign(1, m.src);
    e->owner = -1;
    mask |= 1ull << i;
  }
  host_.send(m.src, MsgHeader{Channel::Gptr, kSwccWriteBackAck, 0, m.a, mask, m.b});
}

void SwccEngine::on_invalidate_ack(const MsgHeader &m) {
  Entry *e = entries_.find(0, block_of(m.a));
  if (!e || !e->busy || !e->acks_left)
    fatal("swcc: invalidation ack for block %llu from rank %d unasked", (unsigned long long)m.a, m.src);
  if (m.c) {  // the copy was still on its way there: again
    host_.send_request(m.src, MsgHeader{Channel::Gptr, kSwccInvalidate, 0, m.a, 0, 0});
    return;
  }
  e->sharers.erase(std::remove(e->sharers.begin(), e->sharers.end(), m.src), e->sharers.end());
  if (--e->acks_left == 0) finish(*e);
}

void SwccEngine::on_recall_reply(const MsgHeader &m, Payload p) {
  Entry *e = entries_.find(0, block_of(m.a));
  if (!e || !e->busy || e->owner != m.src)
    fatal("swcc: recall reply for block %llu from rank %d unasked", (unsigned long long)m.a, m.src);
  if (m.c) {  // the grant making it the owner was still on its way
    host_.send_request(m.src, MsgHeader{Channel::Gptr, kSwccRecall, 0, m.a, 0,
                                        e->want == Entry::Want::Read || e->want == Entry::Want::LocalRead ? 0u : 1u});
    return;
  }
  std::memcpy(home_block(e->block), p.data, p.size);
  bool read = e->want == Entry::Want::Read || e->want == Entry::Want::LocalRead;
  e->sharers.clear();
  if (read) e->sharers.push_back(e->owner);
  e->state = read ? State::Shared : State::Invalid;
  e->owner = -1;
  finish(*e);
}

// Nothing is in the way any more: the requester gets what it asked for.
void SwccEngine::finish(Entry &e) {
  e.busy = false;
  Rank r = e.requester;
  switch (e.want) {
    case Entry::Want::Read:
      if (std::find(e.sharers.begin(), e.sharers.end(), r) == e.sharers.end()) e.sharers.push_back(r);
      e.state = State::Shared;
      grant(r, e.block, State::Shared);
      break;
    case Entry::Want::Write:
      e.sharers.clear();
      e.state = State::Modified;
      e.owner = r;
      grant(r, e.block, State::Modified);
      break;
    case Entry::Want::Store:
      copy_words(host_.segment() + e.store_offset, e.store.data(), e.store.size());
      stored(e.store.size());
      host_.send(r, MsgHeader{Channel::Gptr, kSwccStoreAck, 0, e.store_offset, 0, 0});
      e.store.clear();
      e.state = State::Invalid;
      break;
    case Entry::Want::LocalRead:
      break;  // the segment is current: shared with the sharers it has
    case Entry::Want::LocalWrite:
      e.state = State::Invalid;  // no copy elsewhere: the home writes in place
      break;
  }
  run_home(e);
}

void SwccEngine::grant(Rank to, uint64_t block, State state) {
  host_.send(to, MsgHeader{Channel::Gptr, kSwccGrant, 0, block_offset(block), 0, (uint64_t)state},
             {home_block(block), options_.block_bytes});
}

}  // namespace agora::gptr
