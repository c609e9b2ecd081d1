// Regional consistency (Samhita/RegC): `regc` and `regc-page`.
//
// A *span* is the code between a lock acquire and its release; everything
// else is an ordinary region. Rule 1: ordinary stores made before a span
// starts at P_i are visible at every span that starts anywhere after it;
// rule 2: stores made in spans of a lock are visible at that lock's next
// spans; rule 3: everything before a barrier is visible after it.
//
// Writes are found by write protection, with twins and diffs as in hlrc;
// every closed interval sends its diffs to the pages' homes, which apply
// them in arrival order and acknowledge each with the page's new *version*
// (a per-page count of applied diffs). What travels is then one entry per
// page (regc_entries.h): an update (the diff) or a notice (invalidate a copy
// older than the version). Copies track their version, so entries can arrive
// by several paths, in any order, more than once.
//
//   - span_begin (rule 1): close the interval, then broadcast its entries to
//     every rank but their pages' homes, while the lock request travels; the
//     span starts once granted and every acknowledgement is in. Any span
//     that starts later anywhere has them applied.
//   - span_end (rule 2): close the interval; its entries join the lock's log,
//     which travels with the lock to the next holder and is applied there.
//   - barriers (rule 3): each rank's entries since the last barrier go round.
//   - other sync (thread create/join, thread barriers, semaphores): a release
//     broadcasts like span_begin, so the acquire needs nothing.
//
// The two protocols differ in what a span's entries carry. `regc-page`
// (samhita_page) sends notices only: the next holder invalidates the pages.
// `regc` (samhita) sends updates: the next holder patches its copy, so a
// lock-protected accumulator never costs a page fetch. Under `regc` a small
// ordinary diff (at most kOrdinaryUpdateMax bytes) also travels as an update
// rather than an invalidation; a large one is a notice, as in the paper.
//
// Attribution: write protection sees pages per rank, not stores per thread.
// While several application threads run on the rank, a store made during a
// span may be another thread's ordinary store, so a span's entries are then
// broadcast at the next span start as well (conservative, never wrong).
// With store tracing (span_end's `stores`), a page whose diff lies within
// the bytes the thread stored is known to be the span's alone.
#pragma once
#include <deque>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/stats.h"
#include "protocol/engine.h"
#include "protocol/regc/regc_entries.h"
#include "protocol/shared/flush_observers.h"
#include "protocol/shared/page_copies.h"
#include "protocol/shared/sequential_misses.h"
#include "protocol/shared/write_back_batches.h"

namespace agora {

class RegcEngine final : public ProtocolEngine {
 public:
  enum class SpanStores { Updates, Notices };  // regc, regc-page
  RegcEngine(EngineHost &host, SpanStores span_stores, const EngineOptions &options);
  const char *name() const override { return fine_grain() ? "regc" : "regc-page"; }
  void on_fault(PageId page, Access need, Waiter *w) override;
  void on_message(const MsgHeader &m, Payload p) override;
  Access local_access(PageId page) const override;
  Access home_access() const override { return Access::Write; }

  bool carries_consistency() const override { return true; }
  void release(std::function<void()> published) override;
  // What a thread-sync release broadcasts besides ordinary entries.
  void add_spans_to_release();
  void acquire(Payload info) override;
  void span_begin(uint64_t lock, std::function<void()> ready) override;
  void span_end(uint64_t lock, const std::vector<StoreRange> *stores) override;
  void lock_release(uint64_t lock, std::function<void()> published) override;
  void lock_release_info(uint64_t lock, Payload view, std::vector<std::byte> *out) override;
  void lock_acquire(uint64_t lock, Payload info) override;
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

  static constexpr size_t kOrdinaryUpdateMax = 256;
  // Most pages one fetch asks for (a miss and the pages fetched along).
  static constexpr uint64_t kMaxFetchRun = 64;

  enum Op : uint16_t {
    kFetch = 1,     // requester -> home: a = first page, b = pages (0 counts as 1)
    kPage,          // home -> requester: a = first page, b = pages; payload, per page:
                    // u32 status (0: served, then u64 version + page; else refused)
    kDiffs,         // writer -> home: a = batch; payload = {u64 page, u32 size, diff}*
    kDiffsAck,      // home -> writer: a = batch; payload = u64 version per page, in order
    kEntries,       // broadcast: payload = an encoded RegcLog
    kEntriesAck,    // receiver -> broadcaster
    kWriteBack,     // evicting rank -> home: dirty copies' diffs now, before their intervals
                    // close (no version: the close numbers them); a = pages, payload = {u64 page, u32 size, diff}*
    kWriteBackAck,  // home -> evicting rank: a = pages; payload = u64 page*
  };

 private:
  // Home pages get a twin under regc only (to produce updates).
  struct PageState : PageCopy {
    uint64_t version = 0;  // a valid copy: the home version it equals; home: current
    // A copy holding this rank's own sent writes beyond `version` (not yet
    // numbered by the home, or numbered after a version this copy has not
    // seen): an older update must not be laid over them, so an entry that
    // would patch it invalidates it instead.
    bool own_ahead = false;
    unsigned diffs_in_flight = 0;
    std::map<uint64_t, std::vector<std::byte>> early;  // updates beyond version + 1, by version
    uint64_t need = 0;                                 // the least version a fetched copy may have
    // Home pages whose writes the host tracks, under regc (regc_home_writes.cpp):
    // the page as of its last entry, kept while the home keeps writing it,
    // so that the home's next writes travel as an update, not a notice ...
    std::vector<std::byte> standing;
    // A copy left while the home had writes not yet in an entry: a byte
    // written and restored would be in that copy but in no diff, so the next
    // entry must be a notice.
    bool served_unpublished = false;
  };
  // Where a closed interval's entries go, by the sync operation closing it.
  enum class Closing { Ordinary, SpanEnd, Barrier };

  bool fine_grain() const { return span_stores_ == SpanStores::Updates; }
  bool is_home(PageId page) const { return host_.home_of(page) == host_.rank(); }
  PageState &state(PageId page);

  // ---- faults and copies (regc_pages.cpp) ----
  void fetch_after_miss(PageId page, Access need);
  void fetch_run(PageId first, uint32_t count);
  void on_page(const MsgHeader &m, Payload p);
  void receive_copy(PageId page, uint64_t version, const std::byte *data, bool prefetched, AccessRuns *runs);
  void apply(const RegcEntry &e);
  void apply_all(std::vector<RegcEntryRef> entries);
  void invalidate(PageId page, PageState &s);
  void patch(PageId page, PageState &s, const std::vector<std::byte> &update);
  void settle_early_updates();

  // ---- home side (regc_home.cpp) ----
  void home_serve(const MsgHeader &m);
  void home_apply_diffs(const MsgHeader &m, Payload p);
  // ---- the home's own writes (regc_home_writes.cpp) ----
  void collect_home_writes();
  // At close, a tracked home page reported written: its diff since its
  // standing twin into *diff, true if that diff is exactly its change.
  bool diff_home_written(PageId page, PageState &s, std::vector<std::byte> *diff);
  // At the home, the copy about to be served: notes a copy that differs from
  // the page's last published state (served_unpublished).
  void note_served(PageState &s, const std::byte *copy);
  // Whether a page's first write of an interval takes a twin: every copy
  // homed elsewhere; home pages under regc while their writes are trapped.
  bool twins(const PageState &s) const { return fine_grain() && !s.writes_tracked; }

  // ---- flush (regc_flush.cpp, docs/flush.md) ----
  void flush_pass(const std::vector<FlushPage> &pages, uint64_t token);
  void flush_message(const MsgHeader &m, Payload p);
  // ---- the bounded cache (regc_evict.cpp) ----
  void home_apply_writebacks(const MsgHeader &m, Payload p);
  void on_writebacks_ack(const MsgHeader &m, Payload p);
  void run_acknowledged();  // every diff and write-back is home: run the waiting steps

  // ---- intervals and publication (regc_publish.cpp) ----
  struct Closed {
    RegcEntryRef entry;
    bool span_only;  // store tracing shows the diff is the span's own stores
  };
  std::vector<Closed> close_interval(Closing why, const std::vector<StoreRange> *stores);
  void record(const std::vector<Closed> &made, Closing why);
  void on_diffs_ack(const MsgHeader &m, Payload p);
  void when_acknowledged(std::function<void()> fn);
  void broadcast_then(std::function<void()> fn);
  // Sends unbroadcast_ to the ranks that lack it (all of it, or only its
  // entries the homes have numbered), counting the acknowledgements due.
  void send_unbroadcast(bool numbered_only);
  void on_entries(const MsgHeader &m, Payload p);
  void on_entries_ack();

  EngineHost &host_;
  SpanStores span_stores_;
  EngineOptions options_;
  std::unordered_map<PageId, PageState> pages_;
  std::vector<PageId> dirty_;
  uint32_t phase_ = 0;                  // barriers completed here
  bool threaded_ = false;               // several application threads ran here in this phase
  std::set<uint64_t> threaded_phases_;  // barrier epochs whose phase was threaded somewhere

  // Diffs awaiting their homes' versions, by batch.
  uint64_t next_batch_ = 1;
  std::map<uint64_t, std::vector<RegcEntryRef>> unacknowledged_;
  std::vector<std::function<void()>> on_acknowledged_;
  unsigned writebacks_outstanding_ = 0;  // evicted dirty copies not yet acknowledged
  WriteBackBatches writebacks_;          // queued by evict, sent by end_evictions

  RegcLog unbroadcast_;    // own entries every rank needs before its next span (rule 1)
  RegcLog since_barrier_;  // own entries not yet delivered to every rank (rule 3)
  // Other ranks' span entries applied here from lock logs, not yet passed
  // on by a thread-sync release, and the newest version passed on per page.
  RegcLog relayed_;
  std::unordered_map<PageId, uint64_t> relayed_version_;
  unsigned broadcast_acks_outstanding_ = 0;
  std::vector<std::function<void()>> on_broadcast_;

  std::map<uint64_t, RegcLog> open_spans_;           // lock -> entries closed while it is held here
  std::map<uint64_t, RegcLog> lock_logs_;            // lock -> its log, while last released here
  std::map<uint64_t, RegcLog> barrier_sets_;         // epoch -> entries heard of
  std::set<PageId> early_pages_;                     // pages holding updates that came early
  uint64_t page_floor_ = 0;                          // versions of pages newly homed here start above freed ones
  FlushObservers flush_;                             // observers of home pages, and the copies observed here
  SequentialMisses prefetch_;                        // how many pages a miss fetches along
  std::set<PageId> standing_;                        // home pages with a standing twin ...
  std::deque<PageId> standing_order_;                // ... in the order they were taken (may name pages since dropped)
  static constexpr size_t kStandingTwinsMax = 4096;  // pages; the oldest goes to make room
};

}  // namespace agora
