// agora_flush under hlrc (docs/flush.md): the region's diff goes to the home
// at once (CASE-1), a copy that heard a change notice is refreshed
// (CASE-2), and anything else moves no data (CASE-3, -4). The home sends
// change notices to the page's other observers and refreshes the flusher
// only once they are acknowledged, so a flush of `flag` that follows a
// flush of `data` cannot be seen before `data`'s notice.
//
// With the protocol's own machinery: the flushed bytes of a dirty copy go
// into its twin, so the interval's diff never sends them again (it would
// lay an older value over a newer one), but the page stays dirty, so the
// interval's write notice still names it and barriers and locks carry it
// as before. A refresh lays the home's page under this rank's unflushed
// writes (2-way), as a refetch of a dirty copy does.
#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/hlrc/hlrc_engine.h"
#include "protocol/shared/page_diff.h"

namespace agora {

void HlrcEngine::flush(const std::vector<StoreRange> &ranges, std::function<void()> done) {
  flush_.flush_atomically(
      flush_pages(ranges),
      [this](const std::vector<FlushPage> &pages, uint64_t token) {
        for (const FlushPage &f : pages) flush_page(f, token);
      },
      [this](PageId page) {
        auto it = pages_.find(page);
        return !is_home(page) && it != pages_.end() && it->second.access != Access::None;
      },
      std::move(done));
}

void HlrcEngine::flush_all(std::function<void()> done) {
  flush(flush_.all_pages(pages_, [this](PageId page) { return is_home(page); }), std::move(done));
}

void HlrcEngine::flush_page(const FlushPage &f, uint64_t token) {
  const PageId page = f.page;
  Stats &stats = host_.stats();
  if (is_home(page)) {
    flush_.flush_home_page(f, token);
    return;
  }
  auto it = pages_.find(page);
  if (it == pages_.end() || (it->second.access == Access::None && !it->second.dirty)) {
    stats.flush_unmapped++;  // no copy: the next access fetches the home's
    if (it != pages_.end() && !options_.flush_trusts_outstanding_fetch) page_copy_flushed_unmapped(it->second);
    return;
  }
  PageState &s = it->second;
  std::vector<std::byte> diff;
  if (s.dirty && !s.twin.empty()) {
    // Other threads of this rank may be writing the page: each byte is read
    // once, so that the twin takes exactly what the diff sends (a write
    // landing between a diff and a copy from the frame would never be sent).
    const std::byte *frame = host_.frame(page);
    std::vector<std::byte> now;
    for (auto [offset, length] : f.ranges) {
      now.assign(frame + offset, frame + offset + length);
      flush_region_diff(now.data() - offset, s.twin.data(), offset, length, &diff);
      std::memcpy(s.twin.data() + offset, now.data(), length);
    }
  }
  const Rank home = host_.home_of(page);
  if (!diff.empty() || !flush_.observer_model()) {  // CASE-1 (basic: every time, empty or not)
    stats.flush_case1_diffs++;
    stats.diff_bytes += diff.size();
    flush_.refresh_requested(page, token);
    host_.send_request(home, {Channel::Protocol, FlushObservers::kFlushDiff, 0, page, 0, token},
                       {diff.data(), diff.size()});
  } else if (flush_.has_changes(page)) {  // CASE-2
    stats.flush_case2_refreshes++;
    flush_.refresh_requested(page, token);
    host_.send_request(home, {Channel::Protocol, FlushObservers::kRefreshRequest, 0, page, 0, token});
  } else if (flush_.wait_for_pending_refresh(page, token)) {
    stats.flush_refresh_waits++;  // another thread's refresh is on its way
  } else {
    stats.flush_case3_skips++;  // CASE-3: nothing changed here or at the home
  }
}

void HlrcEngine::flush_message(const MsgHeader &m, Payload p) {
  const PageId page = m.a;
  switch (m.op) {
    case FlushObservers::kFlushDiff: {
      if (!is_home(page) || !host_.page_allocated(page))
        fatal(
            "hlrc: rank %d flushed page %llu, which is not allocated memory homed here (flushed after "
            "agora_free?)",
            m.src, (unsigned long long)page);
      if (!page_diff_apply(host_.frame(page), host_.page_size(), p.data, p.size))
        fatal("hlrc: malformed flush of page %llu from rank %d", (unsigned long long)page, m.src);
      host_.stats().flush_diffs_received++;
      if (!flush_.observer_model()) {
        send_refresh(m.src, page, m.c);
        return;
      }
      flush_.snapshot_apply(page, p.data, p.size);
      if (p.size) flush_.notify(page, m.src);
      flush_.observe(page, m.src);
      const Rank to = m.src;
      const uint64_t token = m.c;
      flush_.when_acknowledged(page, [this, to, page, token] { send_refresh(to, page, token); });
      return;
    }
    case FlushObservers::kRefreshRequest:
      if (!is_home(page) || !host_.page_allocated(page))
        fatal(
            "hlrc: rank %d flushed page %llu, which is not allocated memory homed here (flushed after "
            "agora_free?)",
            m.src, (unsigned long long)page);
      host_.stats().flush_refresh_requests_received++;
      flush_.observe(page, m.src);
      send_refresh(m.src, page, m.c);
      return;
    case FlushObservers::kRefresh: {
      if (p.size != host_.page_size()) fatal("hlrc: malformed refresh of page %llu", (unsigned long long)page);
      host_.stats().flush_refreshes_received++;
      auto it = pages_.find(page);
      if (it != pages_.end() && it->second.access != Access::None) {
        PageState &s = it->second;
        if (s.dirty)
          page_refresh_keeping_writes(host_.frame(page), s.twin.data(), p.data, p.size);
        else
          std::memcpy(host_.frame(page), p.data, p.size);
      } else {
        // A copy invalidated meanwhile is fetched whole at its next access;
        // one being fetched (another thread's miss) may be served before
        // this refresh was: it is asked for again when it arrives, and the
        // next flush refreshes the page again.
        flush_.clear_refreshed(page);
        if (it != pages_.end() && !options_.flush_trusts_outstanding_fetch) page_copy_flushed_unmapped(it->second);
      }
      flush_.refresh_answered(page, m.c);
      return;
    }
    default:
      flush_.on_message(m, p);
  }
}

void HlrcEngine::send_refresh(Rank to, PageId page, uint64_t token) {
  host_.send(to, {Channel::Protocol, FlushObservers::kRefresh, 0, page, 0, token},
             {host_.frame(page), host_.page_size()});
}

}  // namespace agora
