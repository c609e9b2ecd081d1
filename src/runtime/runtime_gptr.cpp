// Global pointers on a real rank: the engine of the scheme AGORA_GPTR names
// (src/gptr), started by the first agora_gptr_alloc, with this rank's
// segment; the checks every access passes before the engine sees it; and
// the waits of blocking accesses, signals, store_sync and releases.
//
// Locking: the engine is guarded by gptr_mu_. A hit (a cached copy, this
// rank's own segment) takes gptr_mu_ only. An access that sends takes lock_
// first (the transport and the statistics are under it), then gptr_mu_, as
// dispatch does for the engine's messages.

#include "common/log.h"
#include "runtime/runtime.h"

namespace agora {

class Runtime::GptrHost final : public gptr::Host {
 public:
  explicit GptrHost(Runtime &rt) : rt_(rt) {}
  Rank rank() const override { return rt_.rank(); }
  Rank nranks() const override { return rt_.compute_nranks(); }
  void send(Rank dst, MsgHeader header, Payload payload) override { rt_.send(dst, header, payload); }
  void send_request(Rank dst, MsgHeader header, Payload payload) override { rt_.send_request(dst, header, payload); }
  Stats &stats() override { return rt_.stats_; }
  std::byte *segment() override { return rt_.gptr_segment_; }
  uint64_t extent() const override { return rt_.gptr_extent_; }

 private:
  Runtime &rt_;
};

namespace {

constexpr uint64_t kGptrAlign = 64 << 10;  // allocations: whole blocks and lines, whatever their size

gptr::Scheme scheme_of(GptrScheme s) {
  switch (s) {
    case GptrScheme::OrderCache: return gptr::Scheme::OrderCache;
    case GptrScheme::OrderNoCache: return gptr::Scheme::OrderNoCache;
    case GptrScheme::Sequencer: return gptr::Scheme::Sequencer;
    case GptrScheme::Swcc: return gptr::Scheme::Swcc;
    case GptrScheme::Direct: return gptr::Scheme::Direct;
  }
  return gptr::Scheme::OrderCache;
}

// The waits a thread does for its split-phase operations with no signal
// (agora_gptr_sync). Per thread, as Split-C's sync() is.
thread_local gptr::Signal tl_implicit_signal;

}  // namespace

uint64_t Runtime::gptr_alloc(uint64_t bytes) {
  uint64_t rounded = bytes > UINT64_MAX - kGptrAlign ? UINT64_MAX : (bytes + kGptrAlign - 1) & ~(kGptrAlign - 1);
  bool ok = true;
  uint64_t offset = 0;
  {
    std::lock_guard<std::mutex> g(lock_);
    std::lock_guard<std::mutex> gg(gptr_mu_);
    if (!gptr_) {
      const Config &c = config_;
      std::string error;
      gptr_segment_ = platform::lazy_zero_alloc(c.gptr_segment_bytes, &error);
      if (!gptr_segment_)
        fatal("agora_gptr_alloc: cannot map the global-pointer segment (AGORA_GPTR_SEGMENT=%s): %s",
              platform::human_bytes(c.gptr_segment_bytes).c_str(), error.c_str());
      gptr::Options o;
      o.scheme = scheme_of(c.gptr_scheme);
      o.line_bytes = c.gptr_line_bytes;
      o.rank_bits = c.gptr_rank_bits;
      o.addr_bits = c.gptr_index_bits;
      o.block_bytes = c.gptr_block_bytes;
      o.dir_bits = c.gptr_dir_bits;
      o.chunk_bytes = (uint32_t)c.gptr_chunk_bytes;
      gptr_host_ = std::make_unique<GptrHost>(*this);
      gptr_ = gptr::make_engine(*gptr_host_, o);
      gptr_on_.store(true);
    }
    uint64_t extent = gptr_extent_.load();
    if (rounded > config_.gptr_segment_bytes - extent) ok = false;
    else offset = extent, gptr_extent_.store(extent + rounded);
  }
  // Every rank asked for the same size (the offsets agree only then), and no
  // rank touches the part before every rank has it.
  int64_t hi = (int64_t)(bytes >> 32), lo = (int64_t)(bytes & 0xffffffffu);
  std::vector<int64_t> check = {hi, lo, ok, -hi, -lo, -(int64_t)ok};
  reduce(check.data(), check.size(), ReduceType::Int64, ReduceOp::Max, CollectiveKind::GptrAlloc);
  if (check[0] != -check[3] || check[1] != -check[4])
    fatal("agora_gptr_alloc is collective: ranks called it with different sizes (%llu here)",
          (unsigned long long)bytes);
  if (check[2] != -check[5])
    fatal("agora_gptr_alloc(%llu bytes): the segment is full on some ranks only", (unsigned long long)bytes);
  if (!ok) {
    if (rank() == 0)
      log_error("agora_gptr_alloc(%llu bytes): the global-pointer segment is full (%llu of %llu bytes used); "
                "raise AGORA_GPTR_SEGMENT",
                (unsigned long long)bytes, (unsigned long long)gptr_extent_.load(),
                (unsigned long long)config_.gptr_segment_bytes);
    return UINT64_MAX;
  }
  return offset;
}

int Runtime::gptr_access(const char *fn, gptr::OpKind kind, uint64_t g, void *local, uint64_t bytes, bool scalar,
                         gptr::Signal *signal) {
  if (!gptr_on_.load(std::memory_order_acquire)) {
    log_error("%s: no global-pointer memory yet (agora_gptr_alloc first)", fn);
    return AGORA_ERR_BAD_POINTER;
  }
  Rank home = gptr::pointer_home(g);
  uint64_t offset = gptr::pointer_offset(g);
  if (scalar && bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) {
    log_error("%s: width %llu; a scalar access is 1, 2, 4 or 8 bytes", fn, (unsigned long long)bytes);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  if (home < 0 || home >= compute_nranks()) {
    log_error("%s: global pointer 0x%llx names rank %d; ranks are 0..%d", fn, (unsigned long long)g, home,
              compute_nranks() - 1);
    return AGORA_ERR_BAD_POINTER;
  }
  uint64_t extent = gptr_extent_;  // only grows; read without the lock, as a lower bound
  if (offset > extent || bytes > extent - offset) {
    log_error("%s: %llu bytes at offset %llu of rank %d's segment, beyond the %llu bytes agora_gptr_alloc "
              "has allocated",
              fn, (unsigned long long)bytes, (unsigned long long)offset, home, (unsigned long long)extent);
    return AGORA_ERR_BAD_POINTER;
  }
  if (scalar && (offset & (bytes - 1))) {
    log_error("%s: offset %llu of rank %d is not aligned to the access's %llu bytes", fn,
              (unsigned long long)offset, home, (unsigned long long)bytes);
    return AGORA_ERR_BAD_POINTER;
  }
  if (bytes && !local) {
    log_error("%s: null local buffer", fn);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  gptr::Signal own;
  gptr::Op op;
  op.kind = kind;
  op.home = home;
  op.offset = offset;
  op.size = bytes;
  op.local = static_cast<std::byte *>(local);
  op.signal = signal ? signal : &own;
  // A blocking write is performed at its home before it returns (as the
  // paper's synchronous write); so is a put the caller syncs on.
  op.write_through = kind == gptr::OpKind::Write && (!signal || !scalar);
  {
    // Counted once, here; the op completes in try_now or after issue.
    std::lock_guard<std::mutex> gg(gptr_mu_);
    op.signal->issue();
    if (gptr_->try_now(op)) return AGORA_OK;
  }
  if (signal) {
    std::lock_guard<std::mutex> g(lock_);
    std::lock_guard<std::mutex> gg(gptr_mu_);
    gptr_->issue(op);
    return AGORA_OK;
  }
  Waiter w;
  WaitNote note{WaitKind::Gptr, (uint64_t)home, 0};
  return noted_wait(note, w, [&] {
    std::lock_guard<std::mutex> gg(gptr_mu_);
    gptr_->issue(op);
    if (own.pending) own.waiter = &w;
    else w.complete(0);
    return 0;
  });
}

gptr::Signal *Runtime::gptr_implicit_signal() { return &tl_implicit_signal; }

int Runtime::gptr_signal_wait(gptr::Signal *signal) {
  {
    std::lock_guard<std::mutex> gg(gptr_mu_);
    if (signal->pending == 0) return AGORA_OK;
  }
  Waiter w;
  WaitNote note{WaitKind::Gptr, (uint64_t)rank(), 2};
  return noted_wait(note, w, [&] {
    std::lock_guard<std::mutex> gg(gptr_mu_);
    if (signal->waiter) {
      log_error("agora_signal_wait: another thread already waits on this signal");
      return (int)AGORA_ERR_MISUSE;
    }
    if (signal->pending) signal->waiter = &w;
    else w.complete(0);
    return 0;
  });
}

int64_t Runtime::gptr_signal_pending(gptr::Signal *signal) {
  std::lock_guard<std::mutex> gg(gptr_mu_);
  return signal->pending;
}

int Runtime::gptr_store_sync(uint64_t bytes) {
  if (!gptr_on_.load()) {
    log_error("agora_gptr_store_sync: no global-pointer memory yet (agora_gptr_alloc first)");
    return AGORA_ERR_BAD_POINTER;
  }
  Waiter w;
  WaitNote note{WaitKind::Gptr, (uint64_t)rank(), 3};
  return noted_wait(note, w, [&] {
    std::lock_guard<std::mutex> gg(gptr_mu_);
    if (!gptr_->store_sync(bytes, [&w] { w.complete(0); })) {
      log_error("agora_gptr_store_sync: another thread of this rank is already waiting in it (one at a time)");
      return (int)AGORA_ERR_MISUSE;
    }
    return 0;
  });
}

void Runtime::gptr_release() {
  if (!gptr_on_.load(std::memory_order_acquire)) return;
  Waiter w;
  WaitNote note{WaitKind::Gptr, (uint64_t)rank(), 1};
  noted_wait(note, w, [&] {
    std::lock_guard<std::mutex> gg(gptr_mu_);
    gptr_->drain([&w] { w.complete(0); });
    return 0;
  });
}

void Runtime::gptr_acquire() {
  if (!gptr_on_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> gg(gptr_mu_);
  gptr_->acquire();
}

void *Runtime::gptr_to_local(uint64_t g) {
  if (!gptr_on_.load() || gptr::pointer_home(g) != rank() || gptr::pointer_offset(g) >= gptr_extent_) return nullptr;
  return gptr_segment_ + gptr::pointer_offset(g);
}

uint64_t Runtime::gptr_from_local(const void *p) {
  auto at = static_cast<const std::byte *>(p);
  if (!gptr_on_.load() || at < gptr_segment_ || at >= gptr_segment_ + gptr_extent_) return UINT64_MAX;
  return gptr::make_pointer(rank(), (uint64_t)(at - gptr_segment_));
}

const char *Runtime::gptr_scheme_name() const { return gptr::scheme_name(scheme_of(config_.gptr_scheme)); }

int Runtime::gptr_counters(gptr::Counters *out) {
  std::lock_guard<std::mutex> gg(gptr_mu_);
  *out = gptr_ ? gptr_->counters() : gptr::Counters{};
  return AGORA_OK;
}

void Runtime::gptr_reset_counters() {
  std::lock_guard<std::mutex> gg(gptr_mu_);
  if (gptr_) gptr_->reset_counters();
}

}  // namespace agora
