// The observer model of OpenMP flush (Wong & Rendell §III), shared by hlrc and
// regc: who observes which home page, the change notices and their
// acknowledgements, and what a rank knows about the copies it observes.
// The engines decide what a flush moves (flush_observers only counts and
// routes); docs/flush.md has the five cases and why they are correct.
//
// Granularity: the paper's *region* is a page here. A home keeps, per page
// some rank has refreshed, its observers, the count of notices not yet
// acknowledged, the flushes waiting for that count to reach zero, and a
// snapshot of the page as its observers last saw it (the home's own
// changes, CASE-5, are found by comparing the flushed bytes with it). An
// observer keeps the pages it has refreshed and heard no notice for since
// (has_changes = false). A change anywhere in a page notifies every
// observer of the page: false sharing costs one extra refresh per notice.
//
// Engines never block: a flush is a count of page operations outstanding
// (begin/expect/finish) whose `done` runs when the last one ends.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "protocol/engine.h"

namespace agora {

// The byte ranges of one flush, grouped by page in page order.
struct FlushPage {
  PageId page;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // (offset, length)
};

class FlushObservers {
 public:
  // Ops on Channel::Protocol, clear of every engine's own (which start at 1).
  enum Op : uint16_t {
    kFlushDiff = 0x80,  // flusher -> home: a = page, c = token; payload = diff of the region (hlrc)
                        //   or empty with b = 1 if the region changed (regc: the diff went as an interval)
    kRefreshRequest,    // flusher -> home: a = page, c = token (CASE-2)
    kRefresh,           // home -> flusher: a = page, c = token; payload = the page (hlrc) or none (regc)
    kChangeNotice,      // home -> observer: a = page
    kNoticeAck,         // observer -> home: a = page
  };
  static bool handles(uint16_t op) { return op >= kFlushDiff && op <= kNoticeAck; }

  FlushObservers(EngineHost &host, const EngineOptions &options);
  bool observer_model() const { return mode_ == FlushMode::Observer; }

  // ---- a flush in progress on this rank ----
  // A flush of several pages: `done` runs once every expected page op has
  // finished (finish_flush), at once if none was expected (end_flush).
  uint64_t begin_flush(std::function<void()> done);
  void expect(uint64_t token);
  void finish(uint64_t token);
  void end_flush(uint64_t token);  // no more expects; runs done if nothing is outstanding

  // A flush of several pages, atomic as OpenMP wants it (flushes with
  // common pages are ordered): `pass` flushes the pages given under a token
  // (expect/finish), and once a pass is over, the pages whose copy heard a
  // change notice meanwhile (`valid_copy` and has_changes) are flushed
  // again, else a page refreshed late could show a write made after one
  // this flush skipped or refreshed early. At most kMaxRounds passes.
  using Pass = std::function<void(const std::vector<FlushPage> &pages, uint64_t token)>;
  void flush_atomically(std::vector<FlushPage> pages, Pass pass, std::function<bool(PageId)> valid_copy,
                        std::function<void()> done);
  static constexpr unsigned kMaxRounds = 64;

  // ---- observer side ----
  // True if this rank must refresh its copy at the next flush (never
  // refreshed, or a change notice came since).
  bool has_changes(PageId page) const { return !subscribed_.count(page); }
  void clear_refreshed(PageId page) { subscribed_.erase(page); }
  // A refresh of `page` asked for under flush `token` (CASE-1, -2): the
  // page counts as refreshed from now on, and the flush waits for the answer.
  void refresh_requested(PageId page, uint64_t token);
  // The home's answer, once the engine has applied it: ends that wait, and
  // once no refresh of the page is on its way, the waits of the flushes
  // that found one pending.
  void refresh_answered(PageId page, uint64_t token);
  // A flush that finds no local change and no notice (CASE-3) while a
  // refresh of the page is still on its way (asked for by another thread's
  // flush) waits for it: the copy is only as new as that refresh will make
  // it. False if none is pending: a true CASE-3, nothing to wait for.
  bool wait_for_pending_refresh(PageId page, uint64_t token);

  // ---- home side ----
  // `who` refreshed `page` (homed here): it observes it from now on. The
  // first observer makes the snapshot (the page as it is now).
  void observe(PageId page, Rank who);
  bool observed(PageId page) const { return homes_.count(page) != 0; }
  // A change of `page` made by `except` (or by this home): notice to every
  // other observer, which stops observing; returns how many were sent.
  unsigned notify(PageId page, Rank except);
  // A diff applied at the home by any path (flush or interval): the
  // snapshot takes it too, so that the home's own flush does not announce it
  // again (whoever made it announces it).
  void snapshot_apply(PageId page, const std::byte *diff, size_t size);
  // CASE-4/5: did the home's own writes change [offset, offset+length) of
  // `page` since its observers last saw it? Updates the snapshot there.
  bool home_changed(PageId page, uint32_t offset, uint32_t length);
  // A flush of a home page (CASE-4/5, both protocols): notices to the
  // observers if the home's own writes changed the flushed ranges, and under
  // the observer model the flush `token` waits for their acks.
  void flush_home_page(const FlushPage &f, uint64_t token);
  // Runs fn once every notice sent for `page` is acknowledged (at once if
  // none is outstanding, or if the tester's mutation skips the acks).
  void when_acknowledged(PageId page, std::function<void()> fn);
  // The same once every page of `pages` has no notice outstanding.
  void when_all_acknowledged(const std::vector<PageId> &pages, std::function<void()> fn);
  // Home pages with observers (flush_all covers them).
  void observed_pages(std::vector<PageId> *out) const;
  // What agora_flush_all flushes, whole pages: every copy held here (valid,
  // or invalid but dirty) in `pages` (an engine's PageCopy states), and every
  // home page with observers, whether or not the engine keeps state for it:
  // a page read only one-sidedly (or refreshed only) has none, and skipping
  // it would hide the home's own change (CASE-5) from its observers.
  template <class PageStates, class IsHome>
  std::vector<StoreRange> all_pages(const PageStates &pages, IsHome is_home) const {
    std::vector<StoreRange> all;
    const uint32_t size = (uint32_t)host_.page_size();
    for (const auto &[page, s] : pages)
      if (!is_home(page) && (s.access != Access::None || s.dirty)) all.push_back({page, 0, size});
    std::vector<PageId> observed;
    observed_pages(&observed);
    for (PageId page : observed) all.push_back({page, 0, size});
    return all;
  }

  // The pages of all_pages within [first, end), in page order, appended to
  // *out. Costs the smaller of the range and the state held (a lookup per
  // page of a short range, a walk of the maps for a long one), so that a
  // flush of a huge region costs what this rank holds of it.
  template <class PageStates, class IsHome>
  void pages_within(const PageStates &pages, IsHome is_home, PageId first, PageId end, std::vector<PageId> *out) const {
    // A copy held, dirty, or being fetched (a flush marks an outstanding fetch
    // for refetch: page_copy_flushed_unmapped).
    auto wanted = [&](PageId page, const auto &s) {
      return !is_home(page) && (s.access != Access::None || s.dirty || s.fetching);
    };
    if (end <= first) return;
    if (end - first <= pages.size() + homes_.size()) {
      for (PageId page = first; page < end; ++page) {
        auto it = pages.find(page);
        if ((it != pages.end() && wanted(page, it->second)) || homes_.count(page)) out->push_back(page);
      }
      return;
    }
    const size_t from = out->size();
    for (const auto &[page, s] : pages)
      if (page >= first && page < end && wanted(page, s)) out->push_back(page);
    for (const auto &[page, o] : homes_)
      if (page >= first && page < end) out->push_back(page);
    std::sort(out->begin() + (std::ptrdiff_t)from, out->end());
    out->erase(std::unique(out->begin() + (std::ptrdiff_t)from, out->end()), out->end());
  }

  // Change notices and their acks (both sides).
  void on_message(const MsgHeader &m, Payload p);

  // Freed memory: forget both sides' state of [first, first+count).
  void forget(PageId first, PageId count);

 private:
  struct Observed {
    std::set<Rank> observers;
    unsigned acks = 0;                           // notices sent, not yet acknowledged
    std::vector<std::function<void()>> waiting;  // flushes to finish at acks == 0
    std::vector<std::byte> snapshot;             // the page as its observers saw it
  };
  struct Round {
    std::vector<FlushPage> pages;
    Pass pass;
    std::function<bool(PageId)> valid_copy;
    std::function<void()> done;
    unsigned round = 0;
  };
  void run_round(std::shared_ptr<Round> r);
  struct PendingRefresh {
    unsigned requested = 0;         // refreshes asked for, not yet answered
    std::vector<uint64_t> waiting;  // flushes (tokens) that found them pending
  };
  struct Flush {
    unsigned outstanding = 0;
    bool ended = false;
    std::function<void()> done;
  };
  void maybe_done(uint64_t token);

  EngineHost &host_;
  FlushMode mode_;
  bool skip_acks_;
  bool skip_rounds_;
  bool skip_pending_refresh_;
  std::unordered_map<PageId, Observed> homes_;
  std::unordered_set<PageId> subscribed_;
  std::unordered_map<PageId, PendingRefresh> pending_;
  std::unordered_map<uint64_t, Flush> flushes_;
  uint64_t next_token_ = 1;
};

// Appends the runs where `page` differs from `twin` within [offset,
// offset+length), in page_diff's encoding (offsets from the page start).
void flush_region_diff(const std::byte *page, const std::byte *twin, uint32_t offset, uint32_t length,
                       std::vector<std::byte> *out);

std::vector<FlushPage> flush_pages(const std::vector<StoreRange> &ranges);

}  // namespace agora
