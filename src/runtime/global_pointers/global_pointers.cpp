// Global pointers on a real rank (GlobalPointers, global_pointers.h): the
// engine of the scheme AGORA_GPTR names, started by the first
// agora_gptr_alloc, with this rank's segment; the checks every access
// passes before the engine sees it; and the waits of blocking accesses,
// signals, store_sync and releases.
#include "runtime/global_pointers/global_pointers.h"

#include <new>

#include "agora/agora.h"
#include "common/log.h"

namespace agora {

namespace {

constexpr uint64_t kGptrAlign = 64 << 10;  // allocations: whole blocks and lines, whatever their size

gptr::Scheme scheme_of(GptrScheme s) {
  switch (s) {
    case GptrScheme::OrderCache:
      return gptr::Scheme::OrderCache;
    case GptrScheme::OrderNoCache:
      return gptr::Scheme::OrderNoCache;
    case GptrScheme::Sequencer:
      return gptr::Scheme::Sequencer;
    case GptrScheme::Swcc:
      return gptr::Scheme::Swcc;
    case GptrScheme::Direct:
      return gptr::Scheme::Direct;
  }
  return gptr::Scheme::OrderCache;
}

// The waits a thread does for its split-phase operations with no signal
// (agora_gptr_sync). Per thread, as Split-C's sync() is.
thread_local gptr::Signal tl_implicit_signal;

}  // namespace

uint64_t GlobalPointers::alloc(uint64_t bytes) {
  uint64_t rounded = bytes > UINT64_MAX - kGptrAlign ? UINT64_MAX : (bytes + kGptrAlign - 1) & ~(kGptrAlign - 1);
  bool ok = true;
  uint64_t offset = 0;
  {
    std::lock_guard<std::mutex> g(host_.runtime_lock());
    std::lock_guard<std::mutex> gg(mu_);
    if (!engine_) {
      const Config &c = config_;
      std::string error;
      segment_ = host_.segment_alloc(c.gptr_segment_bytes, &error);
      if (!segment_)
        fatal("agora_gptr_alloc: cannot map the global-pointer segment (AGORA_GPTR_SEGMENT=%s): %s",
              human_bytes(c.gptr_segment_bytes).c_str(), error.c_str());
      gptr::Options o;
      o.scheme = scheme_of(c.gptr_scheme);
      o.line_bytes = c.gptr_line_bytes;
      o.rank_bits = c.gptr_rank_bits;
      o.addr_bits = c.gptr_index_bits;
      o.block_bytes = c.gptr_block_bytes;
      o.dir_bits = c.gptr_dir_bits;
      o.chunk_bytes = (uint32_t)c.gptr_chunk_bytes;
      engine_ = gptr::make_engine(*this, o);
      on_.store(true);
    }
    uint64_t extent = extent_.load();
    if (rounded > config_.gptr_segment_bytes - extent)
      ok = false;
    else
      offset = extent, extent_.store(extent + rounded);
  }
  // Every rank asked for the same size (the offsets agree only then), and no
  // rank touches the part before every rank has it.
  int64_t hi = (int64_t)(bytes >> 32), lo = (int64_t)(bytes & 0xffffffffu);
  std::vector<int64_t> check = {hi, lo, ok, -hi, -lo, -(int64_t)ok};
  host_.reduce_max(&check);
  if (check[0] != -check[3] || check[1] != -check[4])
    fatal("agora_gptr_alloc is collective: ranks called it with different sizes (%llu here)",
          (unsigned long long)bytes);
  if (check[2] != -check[5])
    fatal("agora_gptr_alloc(%llu bytes): the segment is full on some ranks only", (unsigned long long)bytes);
  if (!ok) {
    if (host_.rank() == 0)
      log_error(
          "agora_gptr_alloc(%llu bytes): the global-pointer segment is full (%llu of %llu bytes used); "
          "raise AGORA_GPTR_SEGMENT",
          (unsigned long long)bytes, (unsigned long long)extent_.load(),
          (unsigned long long)config_.gptr_segment_bytes);
    return UINT64_MAX;
  }
  return offset;
}

int GlobalPointers::access(const char *fn, gptr::OpKind kind, uint64_t g, void *local, uint64_t bytes, bool scalar,
                           gptr::Signal *signal) {
  if (!on_.load(std::memory_order_acquire)) {
    log_error("%s: no global-pointer memory yet (agora_gptr_alloc first)", fn);
    return AGORA_ERR_BAD_POINTER;
  }
  Rank home = gptr::pointer_home(g);
  uint64_t offset = gptr::pointer_offset(g);
  if (scalar && bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) {
    log_error("%s: width %llu; a scalar access is 1, 2, 4 or 8 bytes", fn, (unsigned long long)bytes);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  if (home < 0 || home >= host_.nranks()) {
    log_error("%s: global pointer 0x%llx names rank %d; ranks are 0..%d", fn, (unsigned long long)g, home,
              host_.nranks() - 1);
    return AGORA_ERR_BAD_POINTER;
  }
  uint64_t extent = extent_;  // only grows; read without the lock, as a lower bound
  if (offset > extent || bytes > extent - offset) {
    log_error(
        "%s: %llu bytes at offset %llu of rank %d's segment, beyond the %llu bytes agora_gptr_alloc "
        "has allocated",
        fn, (unsigned long long)bytes, (unsigned long long)offset, home, (unsigned long long)extent);
    return AGORA_ERR_BAD_POINTER;
  }
  if (scalar && (offset & (bytes - 1))) {
    log_error("%s: offset %llu of rank %d is not aligned to the access's %llu bytes", fn, (unsigned long long)offset,
              home, (unsigned long long)bytes);
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
    std::lock_guard<std::mutex> gg(mu_);
    op.signal->issue();
    if (engine_->try_now(op)) return AGORA_OK;
  }
  if (signal) {
    std::lock_guard<std::mutex> g(host_.runtime_lock());
    std::lock_guard<std::mutex> gg(mu_);
    engine_->issue(op);
    return AGORA_OK;
  }
  Waiter w;
  return host_.wait((uint64_t)home, 0, w, [&] {
    std::lock_guard<std::mutex> gg(mu_);
    engine_->issue(op);
    if (own.pending)
      own.waiter = &w;
    else
      w.complete(0);
    return 0;
  });
}

gptr::Signal *GlobalPointers::implicit_signal() { return &tl_implicit_signal; }

int GlobalPointers::signal_wait(gptr::Signal *signal) {
  {
    std::lock_guard<std::mutex> gg(mu_);
    if (signal->pending == 0) return AGORA_OK;
  }
  Waiter w;
  return host_.wait((uint64_t)host_.rank(), 2, w, [&] {
    std::lock_guard<std::mutex> gg(mu_);
    if (signal->waiter) {
      log_error("agora_gptr_signal_wait: another thread already waits on this signal");
      return (int)AGORA_ERR_MISUSE;
    }
    if (signal->pending)
      signal->waiter = &w;
    else
      w.complete(0);
    return 0;
  });
}

int GlobalPointers::signal_init(gptr::Signal *signal) {
  // Under the lock: completions arriving for operations counted on it
  // change it there, and would otherwise land in the new signal (a count
  // below zero, or a waiter woken for another wait).
  // Only a count says so: a signal is waited on only while operations are
  // counted (Signal::complete clears the waiter as the count reaches zero),
  // so a waiter beside a zero count is old bytes, e.g. a finished signal on
  // a thread stack the C library handed to a new thread.
  std::lock_guard<std::mutex> gg(mu_);
  if (signal->magic == gptr::Signal::kMagic && signal->pending != 0) {
    log_error(
        "agora_gptr_signal_init(%p): the signal is in use: %lld operations counted on it have not completed%s "
        "(agora_gptr_signal_wait before initialising it again)",
        (void *)signal, (long long)signal->pending, signal->waiter ? " and a thread waits on it" : "");
    return AGORA_ERR_MISUSE;
  }
  new (signal) gptr::Signal();
  return AGORA_OK;
}

bool GlobalPointers::signal_valid(const char *fn, gptr::Signal *signal) {
  std::lock_guard<std::mutex> gg(mu_);
  if (signal->magic == gptr::Signal::kMagic) return true;
  if (signal->magic == 0 && signal->pending == 0 && signal->waiter == nullptr) {
    signal->magic = gptr::Signal::kMagic;  // zero-filled: valid without init
    return true;
  }
  log_error("%s(%p): the signal was never initialised (agora_gptr_signal_init first, or zero-fill it)", fn,
            (void *)signal);
  return false;
}

int64_t GlobalPointers::signal_pending(gptr::Signal *signal) {
  std::lock_guard<std::mutex> gg(mu_);
  return signal->pending;
}

int GlobalPointers::store_sync(uint64_t bytes) {
  if (!on_.load()) {
    log_error("agora_gptr_store_sync: no global-pointer memory yet (agora_gptr_alloc first)");
    return AGORA_ERR_BAD_POINTER;
  }
  Waiter w;
  return host_.wait((uint64_t)host_.rank(), 3, w, [&] {
    std::lock_guard<std::mutex> gg(mu_);
    if (!engine_->store_sync(bytes, [&w] { w.complete(0); })) {
      log_error("agora_gptr_store_sync: another thread of this rank is already waiting in it (one at a time)");
      return (int)AGORA_ERR_MISUSE;
    }
    return 0;
  });
}

void GlobalPointers::release() {
  if (!on_.load(std::memory_order_acquire)) return;
  Waiter w;
  host_.wait((uint64_t)host_.rank(), 1, w, [&] {
    std::lock_guard<std::mutex> gg(mu_);
    engine_->drain([&w] { w.complete(0); });
    return 0;
  });
}

void GlobalPointers::acquire() {
  if (!on_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> gg(mu_);
  engine_->acquire();
}

void *GlobalPointers::to_local(uint64_t g) {
  if (!on_.load() || gptr::pointer_home(g) != host_.rank() || gptr::pointer_offset(g) >= extent_) return nullptr;
  return segment_ + gptr::pointer_offset(g);
}

uint64_t GlobalPointers::from_local(const void *p) {
  auto at = static_cast<const std::byte *>(p);
  if (!on_.load() || at < segment_ || at >= segment_ + extent_) return UINT64_MAX;
  return gptr::make_pointer(host_.rank(), (uint64_t)(at - segment_));
}

const char *GlobalPointers::scheme_name() const { return gptr::scheme_name(scheme_of(config_.gptr_scheme)); }

int GlobalPointers::counters(gptr::Counters *out) {
  std::lock_guard<std::mutex> gg(mu_);
  *out = engine_ ? engine_->counters() : gptr::Counters{};
  return AGORA_OK;
}

void GlobalPointers::reset_counters() {
  std::lock_guard<std::mutex> gg(mu_);
  if (engine_) engine_->reset_counters();
}

void GlobalPointers::on_message(const MsgHeader &m, Payload p) {
  std::lock_guard<std::mutex> g(mu_);
  if (!engine_) fatal("global-pointer message from rank %d before this rank's first agora_gptr_alloc", m.src);
  engine_->on_message(m, p);
}

}  // namespace agora
