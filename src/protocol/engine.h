// The interface every coherence protocol implements, and what it may ask of
// the layers below. An engine is a single-threaded state machine: the host
// calls it under the host's lock, and it never blocks, never calls MPI or the
// OS. Both the runtime (real ranks) and the simulator (virtual nodes) host it.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/types.h"
#include "transport/message.h"

namespace agora {

// Bytes a thread stored during a span, as found by store tracing.
struct StoreRange {
  PageId page;
  uint32_t offset;
  uint32_t length;  // within the page
};

class EngineHost : public ComponentHost {
 public:
  virtual size_t page_size() const = 0;
  // Protection of this rank's application view of the page.
  virtual void set_access(PageId page, Access access) = 0;
  // The same for [first, first+count), in one change where the host can
  // (one mprotect instead of one per page, which splits the view's mapping
  // page by page).
  virtual void set_access_run(PageId first, PageId count, Access access) {
    for (PageId p = first; p < first + count; ++p) set_access(p, access);
  }
  // This rank's copy of the page, always readable and writable by the engine.
  virtual std::byte *frame(PageId page) = 0;
  // The engine is about to fill frames [first, first+count) (a run of
  // copies arrived): the host may map them in at once rather than a page
  // at a time as they are written.
  virtual void filling_frames(PageId first, PageId count) {
    (void)first;
    (void)count;
  }
  // The engine is about to overwrite the whole frame of `page`, a copy
  // that is not accessible here, and its bytes now are dead: the host may
  // give the page another frame (the bounded cache's pool, docs/cache.md),
  // so frame(page) may return another address, holding any bytes; or the
  // very bytes the engine is installing, when they came from a one-sided
  // read the host landed there (on_remote_read's `pages`).
  virtual void replacing_frame(PageId page) { (void)page; }
  virtual Rank home_of(PageId page) const = 0;
  // At the home: is the page part of a live allocation? (Catches accesses to
  // freed or never-allocated memory in another rank's arena.)
  virtual bool page_allocated(PageId page) const = 0;
  // True while at most one application thread runs on this rank, so that a
  // store made while a span is open is that span's (regc attributes stores
  // by page and rank; with several threads it must assume some are ordinary).
  virtual bool sole_application_thread() const { return false; }

  // ---- home write tracking ----------------------------------------------------
  // Whether the host can tell which home pages this rank wrote without the
  // engine write-protecting them (Linux: userfaultfd write-protect in async
  // mode, read back and re-armed with PAGEMAP_SCAN; the simulator: its record
  // of stores). If so, a home page other ranks hold copies of stays writable.
  virtual bool tracks_home_writes() const { return false; }
  // From now on report this rank's writes to home pages [first, first+count).
  virtual void track_home_writes(PageId first, PageId count) {
    (void)first;
    (void)count;
  }
  // Appends every tracked page written since it was last reported (or since
  // tracking began) and re-arms it. A write racing with the call is reported
  // now or next time, never lost.
  virtual void collect_home_writes(std::vector<PageId> *written) { (void)written; }

  // ---- one-sided reads (Wong & Rendell's fetch without the home's CPU) --------
  // This rank's exposed metadata (kHomeMetaBytes), which the engine keeps
  // current (with a release fence after the frames it describes) and
  // one-sided readers read; nullptr if the host offers no one-sided reads.
  virtual std::byte *home_meta() { return nullptr; }
  // Reads pages [first, first+count) homed at `home` without its CPU, in this
  // order: marks them shared at the home (collect_newly_shared there), reads
  // the first `meta_bytes` of the home's metadata, reads the pages. The engine
  // gets the result later, through on_remote_read (never from inside this
  // call). False if the host cannot (no one-sided transport, forced off, a
  // page it cannot tell is allocated, the home is this rank): send a message.
  virtual bool read_remote(Rank home, PageId first, uint32_t count, uint32_t meta_bytes) {
    (void)home;
    (void)first;
    (void)count;
    (void)meta_bytes;
    return false;
  }
  // At a home: appends the home pages one-sided readers marked shared since
  // the last call (each reported once per marking).
  virtual void collect_newly_shared(std::vector<PageId> *pages) { (void)pages; }
};

// Bytes of a rank's exposed metadata (EngineHost::home_meta).
constexpr size_t kHomeMetaBytes = 4096;

class ProtocolEngine {
 public:
  virtual ~ProtocolEngine() = default;
  virtual const char *name() const = 0;
  // A thread of this rank touched `page` and needs `need`; complete *w when
  // the access may be retried (status 0) or must fail (negative status).
  virtual void on_fault(PageId page, Access need, Waiter *w) = 0;
  virtual void on_message(const MsgHeader &m, Payload p) = 0;
  // A read_remote of this rank completed: the home's metadata, then `count`
  // pages from `first`, as read (the pages no older than the metadata).
  virtual void on_remote_read(Rank home, PageId first, uint32_t count, Payload meta, Payload pages) {
    (void)home;
    (void)first;
    (void)count;
    (void)meta;
    (void)pages;
  }
  // The access the engine currently grants this rank (for checks and tests).
  virtual Access local_access(PageId page) const = 0;
  // Access a home rank's application view starts with on its own pages
  // (sc: writable; hlrc: read-only, so that the first write of an interval
  // is seen).
  virtual Access home_access() const { return Access::Write; }

  // ---- synchronisation hooks ------------------------------------------------
  // Sync operations (locks, barriers, thread create/join) call these so that
  // a release on one rank and the matching acquire on another carry what the
  // protocol needs. Under sc every hook is a no-op and sync takes its fast
  // paths (carries_consistency() == false).
  virtual bool carries_consistency() const { return false; }
  // Make this rank's writes so far publishable (close the interval, send the
  // diffs) and call `published` once they are at their homes. May call it
  // before returning.
  virtual void release(std::function<void()> published) { published(); }
  // What an acquirer sends along with its request: its view of the writes it
  // has seen, so that the releaser sends only what is missing.
  virtual void acquirer_view(std::vector<std::byte> *out) { (void)out; }
  // What a releaser hands an acquirer whose view is `view` (empty: unknown,
  // send all that may be missing). Call after release() has published.
  virtual void release_info(Payload view, std::vector<std::byte> *out) {
    (void)view;
    (void)out;
  }
  // Apply what a releaser handed over (empty payload: the lock was last
  // released on this rank, or never). Called once per acquire.
  virtual void acquire(Payload info) { (void)info; }
  // Barriers: each rank publishes, then every round message carries what the
  // sender knows and every received one is applied; `complete` runs when the
  // barrier ends here (e.g. to discard write notices everyone has applied).
  virtual void barrier_arrive(uint64_t epoch, std::function<void()> published) {
    (void)epoch;
    published();
  }
  virtual void barrier_info(uint64_t epoch, std::vector<std::byte> *out) {
    (void)epoch;
    (void)out;
  }
  virtual void barrier_receive(uint64_t epoch, Payload info) {
    (void)epoch;
    (void)info;
  }
  virtual void barrier_complete(uint64_t epoch) { (void)epoch; }

  // ---- spans: critical sections (regional consistency) ------------------------
  // Locks call these around every critical section (a *span*, Samhita/RegC) so
  // that a protocol can treat the stores made inside one apart from ordinary
  // ones (regc). Other protocols keep the defaults: no-ops, and the lock
  // hand-off hooks are release()/release_info()/acquire().
  //
  // A thread of this rank is about to request `lock` (the request leaves
  // right after this returns): call `ready` when the span may start, once
  // granted (regc: once this rank's ordinary stores are performed at every
  // rank, rule 1). May call it before returning. A trylock's request waits
  // for `ready` instead (a busy answer starts no span to wait for).
  virtual void span_begin(uint64_t lock, std::function<void()> ready) {
    (void)lock;
    ready();
  }
  // A thread of this rank releases `lock`, before the release leaves the rank.
  // `stores`, when the program was built with store tracing, lists exactly
  // the bytes that thread stored to global memory during the span.
  virtual void span_end(uint64_t lock, const std::vector<StoreRange> *stores) {
    (void)lock;
    (void)stores;
  }
  // The lock hand-off of release()/release_info()/acquire(), for one lock.
  virtual void lock_release(uint64_t lock, std::function<void()> published) {
    (void)lock;
    release(std::move(published));
  }
  virtual void lock_release_info(uint64_t lock, Payload view, std::vector<std::byte> *out) {
    (void)lock;
    release_info(view, out);
  }
  // Called when a span of `lock` starts on this rank: granted, and ready
  // after span_begin (empty info: the lock was last released on this rank,
  // or never).
  virtual void lock_acquire(uint64_t lock, Payload info) {
    (void)lock;
    acquire(info);
  }

  // ---- flush (docs/flush.md) ----------------------------------------------------
  // OpenMP flush of the bytes `ranges` name (several pages, any order): this
  // rank's writes to them reach their homes, and this rank's view of them
  // becomes consistent with the homes'. Calls `done` once that holds (maybe
  // before returning). The default suits sc: every access already sees the
  // latest write, so a flush has nothing to do.
  virtual void flush(const std::vector<StoreRange> &ranges, std::function<void()> done) {
    (void)ranges;
    done();
  }
  // The same for every page this rank holds a copy of or homes (flush with
  // no list: all of this rank's view of global memory).
  virtual void flush_all(std::function<void()> done) { done(); }
  // The pages of [first, end) that flush() would act on here, appended to
  // *out in page order; the others, which flush() would only count, are
  // counted as flush_unmapped (a home page nobody observes included, which
  // flush() counts as CASE-4). Lets the runtime flush a huge region of
  // which this rank holds a few pages at the cost of those pages
  // (runtime_flush.cpp). The default suits sc, whose flush does nothing.
  virtual void flush_pages_within(PageId first, PageId end, std::vector<PageId> *out) {
    (void)first;
    (void)end;
    (void)out;
  }

  // ---- freed memory (agora_free of a placed allocation) -----------------------
  // Every rank calls this for [first, first+count) while the pages still have
  // their homes, once the program has freed them: drop every state of those
  // pages (a thread still waiting on one fails with AGORA_ERR_BAD_POINTER, a use after free);
  // the host then closes and zeroes them. `floor` (one entry per rank, or
  // empty) is raised to what any later home of these pages must start from.
  virtual void forget_pages(PageId first, PageId count, std::vector<uint32_t> *floor) {
    (void)first;
    (void)count;
    (void)floor;
  }
  // Pages that become homed here from now on start from at least `floor`
  // (the floors of all pages freed so far, merged by the host).
  virtual void raise_page_floor(const std::vector<uint32_t> &floor) { (void)floor; }

  // ---- a bounded cache of remote pages (AGORA_CACHE, docs/cache.md) -----------
  // The host asks the engine to drop this rank's copy of `page`, homed
  // elsewhere, to make room. Busy: not now (a fetch or request of it is in
  // flight, a thread waits on it, a write-back of it is out); try another.
  // Dropped: the copy is gone, its access None; the host may discard the
  // frame. WritingBack: as Dropped, but this rank's unsent writes to it are
  // on their way to the home (taken from the frame before returning, so the
  // frame may go too); a thread touching the page waits until the home has
  // them. Called by the host between engine calls, never from inside one.
  enum class Eviction { Busy, Dropped, WritingBack };
  virtual Eviction evict(PageId page) {
    (void)page;
    return Eviction::Busy;
  }
  // Does the frame of `page`, a copy not accessible here, hold bytes the
  // engine will use again (a dirty copy's unsent writes, kept for 2-way
  // diffing)? If not, the host may take the frame away (the bounded cache's
  // pool): frame(page) may then return another address, holding any bytes.
  // The host asks between engine calls only.
  virtual bool frame_in_use(PageId page) const {
    (void)page;
    return true;
  }
  // The host's batch of evict calls is over (it calls this before any other
  // engine call): write-backs evict queued leave now, one message per home.
  virtual void end_evictions() {}
  // A page homed here whose protection differs from home_access() (shared,
  // or owned elsewhere) splits the view's mappings too; the host asks for it
  // back when too many are: bring it back to home_access(), possibly later
  // (asynchronously). False if the engine cannot now (busy, or it never can).
  virtual bool reclaim_home(PageId page) {
    (void)page;
    return false;
  }
  virtual bool reclaims_home() const { return false; }
};

// Per-protocol options from the configuration.
struct EngineOptions {
  IntervalPolicy intervals = IntervalPolicy::Lazy;  // hlrc: when an interval ends
  // Most pages a miss fetches (or, under sc, a write takes) ahead of the
  // faulting page when misses are sequential (AGORA_PREFETCH); 0 = off.
  uint32_t prefetch_max = 16;
  // hlrc: fetch the pages a rank keeps missing after barriers as soon as a
  // barrier invalidates them (AGORA_REFRESH).
  bool refresh = true;
  // Testers only: break an engine on purpose, to show the checker notices.
  // ScPrefetchIgnoresState: sc's home prefetches pages that are busy or owned
  // by a third rank; ScBatchSkipsReader: sc's batched invalidation of a run
  // leaves one remote reader out.
  // RegcHomeWriteNoNotice: a home write the host tracked and reported makes
  // no entry; RegcStandingTwinRebased: a copy served with home writes not
  // yet in an entry becomes the page's standing twin, so that the next
  // update lacks those writes (regc_home_writes.cpp). RegcReleaseSkipsSpans:
  // a thread-sync release (thread barrier, post, create) broadcasts only
  // ordinary entries, not the spans' (regc_publish.cpp).
  // RegcSpanStartsAtGrant: a span starts when its lock is granted, before
  // its rule-1 broadcast is acknowledged. RegcBroadcastOwnHomesOnly: a
  // broadcast leaves out every page homed elsewhere, not only at the
  // receiver (regc_publish.cpp).
  enum class Mutation {
    None,
    RegcSkipRule1,
    RegcSkipSpanLog,
    ScPrefetchIgnoresState,
    ScBatchSkipsReader,
    RegcHomeWriteNoNotice,
    RegcStandingTwinRebased,
    RegcReleaseSkipsSpans,
    RegcSpanStartsAtGrant,
    RegcBroadcastOwnHomesOnly
  } mutation = Mutation::None;
  // hlrc's write tracking and one-sided reads (sim_hlrc_test): a collected
  // home write gives no notice; a page newly shared by a one-sided reader
  // gets no conservative notice; remote reads and prefetched pages are
  // installed without their version check; refreshed pages are installed
  // without it; a page fetched writable after a write miss (write_ahead) is
  // taken as unwritten at the close without comparing it with its twin.
  enum class HlrcMutation {
    None,
    HomeWriteNoNotice,
    NewlySharedNoNotice,
    InstallWithoutVersionCheck,
    RefreshWithoutVersionCheck,
    WrittenAheadNotSent
  };
  HlrcMutation hlrc_mutation = HlrcMutation::None;
  // agora_flush (docs/flush.md): observer model or basic region flush.
  FlushMode flush = FlushMode::Observer;
  // Testers only (sim_flush_test): a home completes a flush that changed a
  // region without waiting for the observers' acknowledgements of its change
  // notices, so a notice for `flag` may overtake one for `data`.
  bool flush_skips_acks = false;
  // ... or a flush of several pages never repeats the pages that heard a
  // notice while it ran (it is then not atomic).
  bool flush_skips_rounds = false;
  // ... or a flush that finds a page's refresh still on its way (another
  // thread of the node asked for it) takes the copy as it is (CASE-3).
  bool flush_skips_pending_refresh = false;
  // ... or a flush of a page whose fetch is outstanding lets that fetch's
  // reply be installed, though it may predate the flush.
  bool flush_trusts_outstanding_fetch = false;
  // The bounded cache (sim_cache_test): eviction drops a dirty copy without
  // sending its writes home; sc evicts a read copy while its upgrade to
  // write is in flight (the home then grants write without the page);
  // hlrc/regc fetch an evicted dirty copy again before the home has its
  // writes (a one-sided read overtakes the write-back); hlrc/regc let the
  // host take the frame of an invalidated dirty copy (frame_in_use), losing
  // the writes it keeps for the next copy.
  enum class CacheMutation { None, DropDirty, EvictPending, RefetchBeforeWriteBack, DirtyFrameTaken };
  CacheMutation cache_mutation = CacheMutation::None;
};

// Names of the protocols this build provides, for configuration errors.
std::vector<std::string> protocol_names();
// nullptr if the name is unknown.
std::unique_ptr<ProtocolEngine> protocol_create(const std::string &name, EngineHost &host,
                                                const EngineOptions &options = {});

}  // namespace agora
