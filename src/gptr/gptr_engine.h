// The interface every global-pointer scheme implements, and what it asks of
// its host. Like a protocol engine, a scheme is a single-threaded state
// machine: the host calls it under a lock, it never blocks and never calls
// MPI or the OS, so both the runtime and the simulator drive it.
//
// Accesses to the rank's own segment are served at once from it (every
// scheme; swcc first checks the block's directory entry). Accesses to other
// ranks become messages on Channel::Gptr, answered by the home's engine
// straight from its segment.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "common/log.h"
#include "gptr/gptr_types.h"

namespace agora::gptr {

class Host : public ComponentHost {
 public:
  // This rank's segment, and the bytes of it allocated so far (the same on
  // every rank: allocation is collective).
  virtual std::byte *segment() = 0;
  virtual uint64_t extent() const = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual Scheme scheme() const = 0;
  // Serves op now if that needs no message (a local access, a cache hit):
  // completes it and returns true. Called with only the engine's lock held,
  // so it must not send.
  virtual bool try_now(const Op &op) = 0;
  // Issues op (op.signal is counted by the caller before): may send; the op
  // completes now or when messages arrive.
  virtual void issue(const Op &op) = 0;
  virtual void on_message(const MsgHeader &m, Payload p) = 0;
  // A release (barrier, lock release): every write this rank issued is
  // performed at its home and every access it issued has completed; then
  // `done` (perhaps before returning).
  virtual void drain(std::function<void()> done) = 0;
  // An acquire (barrier end, lock grant): cached copies of other ranks'
  // memory may be stale from now on (ordercache drops them).
  virtual void acquire() {}
  // One-way stores (Split-C's store_sync): `done` once `bytes` more bytes of
  // stores have arrived at this rank than earlier waits consumed. False (and
  // nothing waits) if another wait is under way: one at a time.
  bool store_sync(uint64_t bytes, std::function<void()> done);
  // No access issued by this rank is outstanding (the simulator's check that
  // drains end).
  virtual bool idle() const = 0;
  const Counters &counters() const { return counters_; }
  void reset_counters() { counters_ = {}; }

 protected:
  // An op that waits keeps its own copy of a write's bytes (the caller may
  // reuse its buffer once issue returns).
  struct Queued {
    Op op;
    std::vector<std::byte> data;
    static Queued of(const Op &op);
    // Where the op's bytes are now (the queue may have moved it).
    Op &current() {
      if (op.kind != OpKind::Read) op.local = data.data();
      return op;
    }
  };
  Engine(Host &host, const Options &options) : host_(host), options_(options), me_(host.rank()) {}
  void count_issue(const Op &op);
  // An access to this rank's own segment, done at once.
  void serve_local(const Op &op);
  // The home's side of kReadReq/kWriteReq/kStoreReq: straight from and into
  // the segment, answered with kReadReply/kWriteAck naming `id`. `size_or_mask`
  // is the mask of the bytes to write when `masked` (a cache line).
  void serve_request(const MsgHeader &m, Payload p, uint64_t size_or_mask, uint64_t id, bool masked);
  // The home's side of a store: count its bytes and release a store_sync.
  void stored(uint64_t bytes);
  Host &host_;
  Options options_;
  const Rank me_;  // host_.rank(), without a virtual call on the hit path
  Counters counters_;

 private:
  uint64_t stored_unconsumed_ = 0;
  uint64_t store_wait_bytes_ = 0;
  std::function<void()> store_waiter_;
};

std::unique_ptr<Engine> make_engine(Host &host, const Options &options);

// Removes and returns the request a reply (kReadReply, kWriteAck) names by its id in c.
template <typename Map>
typename Map::mapped_type take_request(Map &pending, const MsgHeader &m) {
  auto it = pending.find(m.c);
  if (it == pending.end()) fatal("gptr: reply %llu from rank %d matches no request", (unsigned long long)m.c, m.src);
  auto request = std::move(it->second);
  pending.erase(it);
  return request;
}

// Copies between a segment and a buffer, each aligned 8-, 4- or 2-byte
// word as one access (a scalar access is atomic, Themis section 2.1).
void copy_words(std::byte *dst, const std::byte *src, uint64_t size);
// The same for the bytes of a line whose bit is set in mask (bit i: byte i).
void copy_masked(std::byte *dst, const std::byte *src, uint32_t size, uint64_t mask);

}  // namespace agora::gptr
