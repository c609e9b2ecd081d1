// agora_flush under regc and regc-page (docs/flush.md). The observer model
// is hlrc's (flush_observers.h); what moves differs, because regc numbers
// every diff a home applies and a copy must equal one of those versions
// (updates patch it from one version to the next):
//  - CASE-1: the rank's changes go home as an ordinary interval (all its
//    dirty pages, entries recorded for rules 1 and 3 as at any release),
//    and once the homes have numbered them the flushed page is reported to
//    its home, which notifies the other observers;
//  - the refresh (CASE-1, -2) is an invalidation once the home answers: the
//    next access fetches the home's current version, so regc never holds a
//    copy that is newer than the version it claims.
// CASE-3/4/5 are hlrc's.
#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/regc/regc_engine.h"

namespace agora {

void RegcEngine::flush(const std::vector<StoreRange> &ranges, std::function<void()> done) {
  flush_.flush_atomically(
      flush_pages(ranges), [this](const std::vector<FlushPage> &pages, uint64_t token) { flush_pass(pages, token); },
      [this](PageId page) {
        auto it = pages_.find(page);
        return !is_home(page) && it != pages_.end() && it->second.access != Access::None;
      },
      std::move(done));
}

void RegcEngine::flush_pass(const std::vector<FlushPage> &pages, uint64_t token) {
  Stats &stats = host_.stats();
  std::vector<std::pair<PageId, bool>> reports;  // (page, changed here)
  bool publish = false;
  for (const FlushPage &f : pages) {
    const PageId page = f.page;
    if (is_home(page)) {
      flush_.flush_home_page(f, token);
      continue;
    }
    auto it = pages_.find(page);
    if (it == pages_.end() || (it->second.access == Access::None && !it->second.dirty)) {
      stats.flush_unmapped++;
      if (it != pages_.end() && !options_.flush_trusts_outstanding_fetch) page_copy_flushed_unmapped(it->second);
      continue;
    }
    PageState &s = it->second;
    bool changed = false;
    if (s.dirty && !s.twin.empty()) {
      const std::byte *frame = host_.frame(page);
      for (auto [offset, length] : f.ranges)
        changed |= std::memcmp(frame + offset, s.twin.data() + offset, length) != 0;
    }
    if (changed || !flush_.observer_model()) {
      stats.flush_case1_diffs++;
      publish |= changed;
      reports.push_back({page, changed});
    } else if (flush_.has_changes(page)) {
      stats.flush_case2_refreshes++;
      flush_.refresh_requested(page, token);
      host_.send_request(host_.home_of(page), {Channel::Protocol, FlushObservers::kRefreshRequest, 0, page, 0, token});
    } else if (flush_.wait_for_pending_refresh(page, token)) {
      stats.flush_refresh_waits++;  // another thread's refresh (invalidation) is on its way
    } else {
      stats.flush_case3_skips++;
    }
  }
  if (!reports.empty()) {
    if (publish) record(close_interval(Closing::Ordinary, nullptr), Closing::Ordinary);
    for (auto &r : reports) flush_.refresh_requested(r.first, token);
    when_acknowledged([this, token, reports = std::move(reports)] {
      for (auto [page, changed] : reports)
        host_.send_request(host_.home_of(page),
                           {Channel::Protocol, FlushObservers::kFlushDiff, 0, page, changed ? 1u : 0u, token});
    });
  }
}

void RegcEngine::flush_all(std::function<void()> done) {
  flush(flush_.all_pages(pages_, [this](PageId page) { return is_home(page); }), std::move(done));
}

void RegcEngine::flush_message(const MsgHeader &m, Payload p) {
  const PageId page = m.a;
  switch (m.op) {
    case FlushObservers::kFlushDiff:
    case FlushObservers::kRefreshRequest: {
      if (!is_home(page) || !host_.page_allocated(page))
        fatal(
            "%s: rank %d flushed page %llu, which is not allocated memory homed here (flushed after "
            "agora_free?)",
            name(), m.src, (unsigned long long)page);
      if (m.op == FlushObservers::kFlushDiff)
        host_.stats().flush_diffs_received++;
      else
        host_.stats().flush_refresh_requests_received++;
      const Rank to = m.src;
      const uint64_t token = m.c;
      auto reply = [this, to, page, token] {
        host_.send(to, {Channel::Protocol, FlushObservers::kRefresh, 0, page, 0, token});
      };
      if (!flush_.observer_model()) {
        reply();
        return;
      }
      // The diff itself came as an interval (home_apply_diffs notified the
      // observers then); this covers a change that reached the home first.
      if (m.op == FlushObservers::kFlushDiff && m.b) flush_.notify(page, m.src);
      flush_.observe(page, m.src);
      flush_.when_acknowledged(page, reply);
      return;
    }
    case FlushObservers::kRefresh: {
      host_.stats().flush_refreshes_received++;
      auto it = pages_.find(page);
      if (it != pages_.end() && it->second.access != Access::None)
        invalidate(page, it->second);
      else if (it != pages_.end() && !options_.flush_trusts_outstanding_fetch)
        page_copy_flushed_unmapped(it->second);  // a fetch on its way may predate the home's answer
      flush_.refresh_answered(page, m.c);
      return;
    }
    default:
      flush_.on_message(m, p);
  }
}

}  // namespace agora
