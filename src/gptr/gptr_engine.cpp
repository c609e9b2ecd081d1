#include "gptr/gptr_engine.h"

#include <cstring>

#include "gptr/order/order_engine.h"
#include "gptr/sequencer/sequencer_engine.h"
#include "gptr/swcc/swcc_engine.h"

namespace agora::gptr {

const char *scheme_name(Scheme s) {
  switch (s) {
    case Scheme::Direct:
      return "direct";
    case Scheme::OrderNoCache:
      return "ordernocache";
    case Scheme::OrderCache:
      return "ordercache";
    case Scheme::Sequencer:
      return "sequencer";
    case Scheme::Swcc:
      return "swcc";
  }
  return "?";
}

bool scheme_from_name(const std::string &name, Scheme *out) {
  for (Scheme s : {Scheme::Direct, Scheme::OrderNoCache, Scheme::OrderCache, Scheme::Sequencer, Scheme::Swcc})
    if (name == scheme_name(s)) {
      *out = s;
      return true;
    }
  return false;
}

std::unique_ptr<Engine> make_engine(Host &host, const Options &options) {
  switch (options.scheme) {
    case Scheme::Direct:
    case Scheme::OrderNoCache:
    case Scheme::OrderCache:
      return std::make_unique<OrderEngine>(host, options);
    case Scheme::Sequencer:
      return std::make_unique<SequencerEngine>(host, options);
    case Scheme::Swcc:
      return std::make_unique<SwccEngine>(host, options);
  }
  return nullptr;
}

bool Engine::store_sync(uint64_t bytes, std::function<void()> done) {
  if (store_waiter_) return false;
  if (stored_unconsumed_ >= bytes) {
    stored_unconsumed_ -= bytes;
    done();
    return true;
  }
  store_wait_bytes_ = bytes;
  store_waiter_ = std::move(done);
  return true;
}

void Engine::stored(uint64_t bytes) {
  counters_.stored_bytes_in += bytes;
  stored_unconsumed_ += bytes;
  if (store_waiter_ && stored_unconsumed_ >= store_wait_bytes_) {
    stored_unconsumed_ -= store_wait_bytes_;
    auto done = std::move(store_waiter_);
    store_waiter_ = nullptr;
    done();
  }
}

Engine::Queued Engine::Queued::of(const Op &op) {
  Queued q{op, {}};
  if (op.kind != OpKind::Read) {
    q.data.assign(op.local, op.local + op.size);
    q.op.local = q.data.data();
  }
  return q;
}

void Engine::count_issue(const Op &op) {
  if (op.kind == OpKind::Read)
    counters_.reads++;
  else if (op.kind == OpKind::Write)
    counters_.writes++;
  else
    counters_.stores++;
}

void Engine::serve_local(const Op &op) {
  std::byte *at = host_.segment() + op.offset;
  if (op.kind == OpKind::Read) {
    copy_words(op.local, at, op.size);
  } else {
    copy_words(at, op.local, op.size);
    if (op.kind == OpKind::Store) stored(op.size);
  }
  counters_.local++;
  op.signal->complete();
}

void Engine::serve_request(const MsgHeader &m, Payload p, uint64_t size_or_mask, uint64_t id, bool masked) {
  std::byte *at = host_.segment() + m.a;
  if (m.op == kReadReq) {
    host_.send(m.src, MsgHeader{Channel::Gptr, kReadReply, 0, 0, 0, id}, {at, size_or_mask});
    return;
  }
  uint64_t bytes = masked ? (uint64_t)__builtin_popcountll(size_or_mask) : size_or_mask;
  if (masked)
    copy_masked(at, p.data, (uint32_t)p.size, size_or_mask);
  else
    copy_words(at, p.data, size_or_mask);
  if (m.op == kStoreReq) stored(bytes);
  host_.send(m.src, MsgHeader{Channel::Gptr, kWriteAck, 0, 0, 0, id});
}

namespace {

template <typename T>
void copy_one(std::byte *dst, const std::byte *src) {
  __atomic_store_n(reinterpret_cast<T *>(dst), __atomic_load_n(reinterpret_cast<const T *>(src), __ATOMIC_RELAXED),
                   __ATOMIC_RELAXED);
}

bool aligned(const void *p, size_t n) { return ((uintptr_t)p & (n - 1)) == 0; }

}  // namespace

void copy_words(std::byte *dst, const std::byte *src, uint64_t size) {
  while (size) {
    if (size >= 8 && aligned(dst, 8) && aligned(src, 8)) {
      copy_one<uint64_t>(dst, src);
      dst += 8, src += 8, size -= 8;
    } else if (size >= 4 && aligned(dst, 4) && aligned(src, 4)) {
      copy_one<uint32_t>(dst, src);
      dst += 4, src += 4, size -= 4;
    } else if (size >= 2 && aligned(dst, 2) && aligned(src, 2)) {
      copy_one<uint16_t>(dst, src);
      dst += 2, src += 2, size -= 2;
    } else {
      copy_one<uint8_t>(dst, src);
      dst += 1, src += 1, size -= 1;
    }
  }
}

void copy_masked(std::byte *dst, const std::byte *src, uint32_t size, uint64_t mask) {
  uint32_t i = 0;
  while (i < size) {
    if (!(mask >> i & 1)) {
      ++i;
      continue;
    }
    uint32_t j = i;
    while (j < size && (mask >> j & 1)) ++j;
    copy_words(dst + i, src + i, j - i);
    i = j;
  }
}

}  // namespace agora::gptr
