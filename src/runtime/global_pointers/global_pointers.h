// Global pointers on a real rank (docs/gptr.md): the engine of the scheme
// AGORA_GPTR names (src/gptr), started by the first agora_gptr_alloc, with
// this rank's segment; the checks every access passes before the engine
// sees it; and the waits of blocking accesses, signals, store_sync and
// releases. This class owns the engine, the segment and the engine's lock;
// it is the engine's gptr::Host and reaches the rank through
// GlobalPointersHost.
//
// Locking: the engine is guarded by mu_. A hit (a cached copy, this rank's
// own segment) takes mu_ only. An access that sends takes the runtime's
// lock first (the transport and the statistics are under it), then mu_, as
// the runtime's dispatch does for the engine's messages (on_message).
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/config.h"
#include "gptr/gptr_engine.h"
#include "transport/message.h"

namespace agora {

class GlobalPointersHost {
 public:
  virtual ~GlobalPointersHost() = default;
  // The program's ranks (memory servers have no segment).
  virtual Rank rank() const = 0;
  virtual Rank nranks() const = 0;
  virtual void send(Rank dst, MsgHeader header, Payload payload) = 0;
  virtual void send_request(Rank dst, MsgHeader header, Payload payload) = 0;
  virtual Stats &stats() = 0;
  // The runtime's lock, taken before mu_ when both are held.
  virtual std::mutex &runtime_lock() = 0;
  // Runs start under the runtime's lock (a non-zero status from it is
  // returned at once), then waits for w, noted for the hang watch as a
  // global-pointer wait on (a, b); returns w's status.
  virtual int wait(uint64_t a, uint64_t b, Waiter &w, const std::function<int()> &start) = 0;
  // Collective over the program's ranks: the element-wise maximum of *v.
  virtual void reduce_max(std::vector<int64_t> *v) = 0;
  // The segment's memory (reads as zero), or nullptr with *error.
  virtual std::byte *segment_alloc(uint64_t bytes, std::string *error) = 0;
};

class GlobalPointers final : private gptr::Host {
 public:
  GlobalPointers(GlobalPointersHost &host, const Config &config) : host_(host), config_(config) {}
  GlobalPointers(const GlobalPointers &) = delete;
  GlobalPointers &operator=(const GlobalPointers &) = delete;

  // Collective; the first call starts the scheme and maps the segment.
  // Returns the offset of this call's part, or UINT64_MAX when full.
  uint64_t alloc(uint64_t bytes);
  // One access. `signal` null: blocking (returns once complete). Checks g
  // (rank, extent; a scalar's width and alignment) and says what is wrong.
  int access(const char *fn, gptr::OpKind kind, uint64_t g, void *local, uint64_t bytes, bool scalar,
             gptr::Signal *signal);
  int signal_wait(gptr::Signal *signal);
  // agora_gptr_signal_init: AGORA_ERR_MISUSE (the signal left as it was) if
  // it was initialised and operations counted on it are pending or a
  // thread waits on it.
  int signal_init(gptr::Signal *signal);
  // A signal the program passes: initialised, or zero-filled (then marked
  // initialised). Otherwise says so, naming fn, and returns false.
  bool signal_valid(const char *fn, gptr::Signal *signal);
  // The calling thread's signal for split-phase operations given none (agora_gptr_sync).
  gptr::Signal *implicit_signal();
  // What stores are counted on (nobody waits on it; it lives as long as the rank).
  gptr::Signal *store_signal() { return &stores_; }
  int64_t signal_pending(gptr::Signal *signal);
  int store_sync(uint64_t bytes);
  void *to_local(uint64_t g);
  uint64_t from_local(const void *p);
  const char *scheme_name() const;
  int counters(gptr::Counters *out);
  void reset_counters();
  // The release and acquire halves of barriers and locks (no-ops until the
  // first alloc).
  void release();
  void acquire();
  // A message on Channel::Gptr (the runtime's lock held).
  void on_message(const MsgHeader &m, Payload p);

 private:
  // gptr::Host, for the engine.
  Rank rank() const override { return host_.rank(); }
  Rank nranks() const override { return host_.nranks(); }
  void send(Rank dst, MsgHeader header, Payload payload) override { host_.send(dst, header, payload); }
  void send_request(Rank dst, MsgHeader header, Payload payload) override { host_.send_request(dst, header, payload); }
  Stats &stats() override { return host_.stats(); }
  std::byte *segment() override { return segment_; }
  uint64_t extent() const override { return extent_; }

  GlobalPointersHost &host_;
  const Config &config_;
  std::mutex mu_;
  std::unique_ptr<gptr::Engine> engine_;
  std::atomic<bool> on_{false};
  std::byte *segment_ = nullptr;
  std::atomic<uint64_t> extent_{0};  // bytes allocated, the same on every rank (grows only)
  gptr::Signal stores_;              // under mu_
};

}  // namespace agora
