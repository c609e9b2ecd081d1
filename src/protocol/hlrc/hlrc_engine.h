// Home-based lazy release consistency (Iosevich & Schuster, after Iftode's HLRC).
//
// Every page has a home that holds its newest version. Other ranks cache
// copies, valid until a write notice names the page. Writes are found by
// write protection: the first write of an interval to a cached page takes a
// twin; when the interval ends, the page is diffed against its twin and the
// diff goes to the home, which acknowledges it. An interval's notices are
// published (handed to an acquirer, or to everyone at a barrier) only after
// all its diffs are acknowledged, so a page fetched after seeing a notice
// already holds the write it announces. Page replies carry the home's
// per-creator version of the page; a reply older than the versions the
// notices require, or a duplicate, is dropped (the request is resent).
//
// A home's own writes need no diff, and need no notice either while no other
// rank holds a copy: home pages are write-tracked only once another rank
// has fetched them, so owner-computes codes pay nothing for their own pages.
//
// When the host tracks home writes (EngineHost::tracks_home_writes), a shared
// home page is never write-protected: the host reports which tracked pages
// the home wrote, and each interval's close turns them into notices. With
// the host's one-sided reads as well, a miss reads the page (and the home's
// applied-interval vector, home_meta) without the home's CPU; see
// hlrc_remote_read.cpp for why that is safe. Sequential misses to one home
// fetch the following pages too (shared/sequential_misses.h), and pages a rank keeps
// missing after barriers are fetched again as each barrier ends
// (hlrc_refresh.cpp). docs/hlrc.md has the whole argument.
//
// Intervals are per rank, shared by all its threads (Iosevich & Schuster §4.2). They
// end when lock ownership passes to another rank, at barriers and at thread
// create/exit (lazy policy), or additionally at every lock acquire
// (aggressive policy). Under the lazy policy a notice can name a page this
// rank has dirty: it is invalidated but keeps its twin, and when refetched
// its local changes are diffed against the twin and re-applied to the new
// copy (2-way diffing), so no local thread's write is lost.
#pragma once
#include <map>
#include <unordered_map>
#include <vector>

#include "common/stats.h"
#include "protocol/engine.h"
#include "protocol/shared/flush_observers.h"
#include "protocol/shared/page_copies.h"
#include "protocol/shared/sequential_misses.h"
#include "protocol/shared/write_back_batches.h"
#include "protocol/shared/write_notices.h"

namespace agora {

class HlrcEngine final : public ProtocolEngine {
 public:
  HlrcEngine(EngineHost &host, const EngineOptions &options);
  const char *name() const override { return "hlrc"; }
  void on_fault(PageId page, Access need, Waiter *w) override;
  void on_message(const MsgHeader &m, Payload p) override;
  void on_remote_read(Rank home, PageId first, uint32_t count, Payload meta, Payload pages) override;
  Access local_access(PageId page) const override;
  // Home pages start writable: a page no other rank has a copy of needs no
  // write notices (see cached_elsewhere).
  Access home_access() const override { return Access::Write; }

  bool carries_consistency() const override { return true; }
  void release(std::function<void()> published) override;
  void acquirer_view(std::vector<std::byte> *out) override;
  void release_info(Payload view, std::vector<std::byte> *out) override;
  void acquire(Payload info) override;
  void barrier_arrive(uint64_t epoch, std::function<void()> published) override;
  void barrier_info(uint64_t epoch, std::vector<std::byte> *out) override;
  void barrier_receive(uint64_t epoch, Payload info) override;
  void barrier_complete(uint64_t epoch) override;
  void forget_pages(PageId first, PageId count, std::vector<uint32_t> *floor) override;
  void raise_page_floor(const std::vector<uint32_t> &floor) override;
  void flush(const std::vector<StoreRange> &ranges, std::function<void()> done) override;
  void flush_all(std::function<void()> done) override;
  void flush_pages_within(PageId first, PageId end, std::vector<PageId> *out) override {
    const size_t before = out->size();
    flush_.pages_within(
        pages_, [this](PageId page) { return is_home(page); }, first, end, out);
    host_.stats().flush_unmapped += (end - first) - (out->size() - before);
  }
  Eviction evict(PageId page) override;
  void end_evictions() override;
  bool frame_in_use(PageId page) const override;

  // Most pages one fetch (message or one-sided read) may ask for.
  static constexpr uint64_t kMaxFetchRun = 4096;
  // Most pages one refresh fetches: what the runtime reads one-sidedly in
  // one go (its kMaxRemoteReadPages), so that a run is never split.
  static constexpr size_t kMaxRefreshRun = 64;

  enum Op : uint16_t {
    kFetch = 1,     // requester -> home: a = first page, b = pages (0 counts as 1)
    kPage,          // home -> requester: a = first page, b = pages; payload, per page:
                    // u32 status (0: served, then version[n] (u32) + page; else refused)
    kDiffs,         // writer -> home: a = interval; payload = {u64 page, u32 size, diff}*
    kDiffsAck,      // home -> writer: a = interval
    kWriteBack,     // evicting rank -> home: dirty copies' diffs now, before their intervals
                    // close (no version: the close numbers them); a = pages, payload = {u64 page, u32 size, diff}*
    kWriteBackAck,  // home -> evicting rank: a = pages; payload = u64 page*
  };

 private:
  // Home pages get no twin: the home's copy is the reference. A home page
  // is write-tracked (and its writes produce notices) once cached elsewhere.
  struct PageState : PageCopy {
    VectorTime need;     // cached pages: versions the notices seen require
    VectorTime version;  // home pages: diffs applied, per creator
    // Home pages whose writes the host tracks: how many times the marks of
    // one-sided readers had been collected when tracking began.
    uint64_t tracked_after_drain = 0;
    // Refresh at barriers (hlrc_refresh.cpp): a notice invalidated this copy
    // (stale), and this rank fetched it again afterwards (hot), so the next
    // barrier that invalidates it fetches it at once. `refreshes` counts
    // those since a thread was last seen to want the page.
    bool stale = false;
    bool hot = false;
    bool refreshing = false;  // the fetch in flight is a refresh
    uint8_t refreshes = 0;
  };
  bool is_home(PageId page) const { return host_.home_of(page) == host_.rank(); }
  PageState &state(PageId page);

  // ---- faults and page copies (hlrc_pages.cpp) ----
  // A miss on `page`: fetch it, and the pages after it when misses to its
  // home are sequential.
  void fetch_after_miss(PageId page, Access need);
  // Marks [first, first+count) fetching and fetches them, one-sided if the
  // host can, else by message.
  void fetch_run(PageId first, uint32_t count);
  void fetch_by_message(PageId first, uint32_t count);
  void on_page(const MsgHeader &m, Payload p);
  // A copy of `page` arrived (by message or one-sided read), `version` its
  // home's versions (or the home's applied-interval vector). Installs it, or
  // drops it as a duplicate or as older than this rank requires (then
  // refetches by message if a thread waits on it). `prefetched`: not the
  // page that missed; `one_sided`: read without the home's CPU.
  void receive_copy(PageId page, const VectorTime &version, const std::byte *data, bool prefetched, bool one_sided,
                    AccessRuns *runs);
  void invalidate(PageId page, Rank creator, uint32_t index, AccessRuns *runs);

  // ---- refresh at barriers (hlrc_refresh.cpp) ----
  // A copy is installed (hot if a notice had made it stale).
  void note_refetched(PageState &s, bool refreshed);
  // A thread waits for a page being fetched ahead: it is in use.
  void note_wanted(PageState &s);
  // A notice invalidated a valid copy: queue it if hot and the notice came
  // with a barrier.
  void note_invalidated(PageId page, PageState &s);
  // At barrier end: fetch the queued pages, in runs, before they are missed.
  void refresh_hot_pages();

  // ---- home side (hlrc_home.cpp) ----
  void home_serve(const MsgHeader &m);
  void home_apply_diffs(const MsgHeader &m, Payload p);

  // ---- home write tracking (hlrc_home_writes.cpp) ----
  // A copy of a home page is about to leave: from now on the home's writes
  // to it must produce notices (tracked by the host, or trapped).
  void share_home(PageId page, PageState &s);
  // At an interval's close: the tracked home pages written, and the pages
  // one-sided readers newly shared (conservatively written), into dirty_.
  void collect_home_writes();
  // Publishes the applied-interval vector to one-sided readers (home_meta).
  void publish_home_meta();

  // ---- one-sided reads (hlrc_remote_read.cpp) ----
  // The host tracks home writes and offers one-sided reads (both sides of
  // a one-sided read run this engine, with the same host).
  bool one_sided() const;
  size_t home_meta_bytes() const { return 4 * (size_t)host_.nranks(); }

  // ---- flush (hlrc_flush.cpp, docs/flush.md) ----
  void flush_page(const FlushPage &f, uint64_t token);
  void flush_message(const MsgHeader &m, Payload p);
  void send_refresh(Rank to, PageId page, uint64_t token);
  // ---- the bounded cache (hlrc_evict.cpp) ----
  void home_apply_writebacks(const MsgHeader &m, Payload p);
  void on_writebacks_ack(const MsgHeader &m, Payload p);

  // ---- intervals (hlrc_intervals.cpp) ----
  void close_interval();
  void on_diffs_ack();
  void note_notices_kept();  // stats: the most intervals held at once
  void when_published(std::function<void()> fn);
  void merge(Payload bundle, const char *what);

  EngineHost &host_;
  EngineOptions options_;
  std::unordered_map<PageId, PageState> pages_;
  std::vector<PageId> dirty_;  // pages written in the open interval
  WriteNotices notices_;
  unsigned acks_outstanding_ = 0;
  // Evicted dirty copies whose write-backs the homes have not acknowledged:
  // notices wait for them too.
  unsigned writebacks_outstanding_ = 0;
  WriteBackBatches writebacks_;  // queued by evict, sent by end_evictions
  std::vector<std::function<void()>> on_published_;
  std::map<uint64_t, VectorTime> barrier_arrivals_;  // epoch -> max vector time at arrival
  VectorTime previous_barrier_;                      // everyone has seen this much once the next barrier is entered
  // Versions a page newly homed here starts from: at least those of every
  // freed page, so that a write notice about freed memory (still travelling
  // with sync operations) never makes a fetch of its reused pages wait for
  // a diff that will not come.
  VectorTime page_floor_;
  // Home side of one-sided reads: the highest interval of each creator
  // whose diffs this home has applied (its own: the last it closed), at
  // least page_floor_; mirrored into host_.home_meta().
  VectorTime applied_;
  // Times the marks of one-sided readers were collected (collect_newly_shared).
  uint64_t shared_drains_ = 0;
  // Requester side: misses per home, to fetch ahead of sequential ones.
  SequentialMisses prefetch_;
  // Hot pages invalidated by the barrier being merged, to refresh at its end.
  std::vector<PageId> refresh_;
  bool merging_barrier_ = false;
  // Observers of home pages, and the copies this rank observes (flush).
  FlushObservers flush_;
};

}  // namespace agora
