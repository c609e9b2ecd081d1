// Requester side of regc: access faults, twins, page fetches and installs,
// and applying the entries that sync operations bring.
#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/regc/regc_engine.h"
#include "protocol/shared/page_copy_checks.h"
#include "protocol/shared/page_diff.h"

namespace agora {

RegcEngine::RegcEngine(EngineHost &host, SpanStores span_stores, const EngineOptions &options)
    : host_(host),
      span_stores_(span_stores),
      options_(options),
      flush_(host, options),
      prefetch_((uint32_t)std::min<uint64_t>(options.prefetch_max, kMaxFetchRun - 1)) {
  if (host.page_size() > 32768) fatal("%s: page size %zu exceeds 32 KiB", name(), host.page_size());
}

RegcEngine::PageState &RegcEngine::state(PageId page) { return page_copy_state(pages_, host_, page, page_floor_); }

Access RegcEngine::local_access(PageId page) const { return page_copy_access(pages_, host_, page); }

void RegcEngine::on_fault(PageId page, Access need, Waiter *w) {
  PageState &s = state(page);
  const bool planted = options_.cache_mutation == EngineOptions::CacheMutation::RefetchBeforeWriteBack;
  if (page_copy_fault(host_, page, s, need, w, &dirty_, twins(s), planted)) fetch_after_miss(page, need);
  AGORA_ASSERT(page_copy_consistent(host_, page, s, twins(s)));
}

void RegcEngine::fetch_after_miss(PageId page, Access need) {
  // As hlrc's: the pages after it too while misses are sequential, in the
  // same message (shared/sequential_misses.h, page_copies.h).
  const uint32_t ahead = prefetch_.on_miss(host_.home_of(page), page);
  fetch_run(page, page_copy_fetch_run(pages_, host_, page, ahead, need,
                                      [this](PageId p) -> PageState & { return state(p); }));
}

void RegcEngine::fetch_run(PageId first, uint32_t count) {
  for (PageId p = first; p < first + count; ++p) {
    PageState &s = state(p);
    s.fetching = true;
    s.refetch = false;
  }
  host_.send_request(host_.home_of(first), {Channel::Protocol, kFetch, 0, first, count, 0});
}

void RegcEngine::on_page(const MsgHeader &m, Payload p) {
  const PageId first = m.a;
  const uint64_t count = m.b ? m.b : 1;
  const size_t size = host_.page_size();
  if (count > kMaxFetchRun)
    fatal("%s: malformed page reply from rank %d (%llu pages)", name(), m.src, (unsigned long long)count);
  size_t at = 0;
  AccessRuns runs;  // one protection change per run of pages installed
  host_.filling_frames(first, count);
  for (PageId page = first; page < first + count; ++page) {
    uint32_t status;
    if (at + 4 > p.size) fatal("%s: malformed page reply from rank %d", name(), m.src);
    std::memcpy(&status, p.data + at, 4);
    at += 4;
    if (status != 0) {  // refused: not allocated at the home
      PageState &s = state(page);
      if (s.fetching && s.access == Access::None) page_copy_refused(s, (int)(int32_t)status);
      continue;
    }
    uint64_t version;
    if (at + 8 + size > p.size) fatal("%s: malformed page reply from rank %d", name(), m.src);
    std::memcpy(&version, p.data + at, 8);
    receive_copy(page, version, p.data + at + 8, page != first, &runs);
    at += 8 + size;
  }
  runs.apply(host_);
  if (at != p.size) fatal("%s: malformed page reply from rank %d (%zu bytes left over)", name(), m.src, p.size - at);
}

void RegcEngine::receive_copy(PageId page, uint64_t version, const std::byte *data, bool prefetched, AccessRuns *runs) {
  PageState &s = state(page);
  if (!s.fetching || s.access != Access::None) {  // a duplicate: already installed
    host_.stats().stale_replies++;
    return;
  }
  if (version < s.need || s.refetch) {  // served before writes this rank must see reached the home
    host_.stats().stale_replies++;
    // Ask again for a page a thread waits for; one fetched along is left missing.
    if (s.waiters.empty())
      s.fetching = s.refetch = s.write_ahead = false;
    else
      fetch_run(page, 1);
    return;
  }
  // Copies only move forward: every way a copy is invalidated raised its
  // need above its version.
  AGORA_ASSERT(version >= s.version);
  s.version = version;
  s.own_ahead = false;  // served after every diff this rank sent (see refetch)
  page_copy_install(host_, page, s, data, &dirty_, fine_grain(), runs);
  if (prefetched) host_.stats().pages_prefetched++;
}

void RegcEngine::invalidate(PageId page, PageState &s) {
  s.early.clear();
  page_copy_invalidate(host_, page, s);
}

void RegcEngine::apply(const RegcEntry &e) {
  if (is_home(e.page)) return;  // the home applied the diff before any entry named it
  PageState &s = state(e.page);
  s.need = std::max(s.need, e.version);
  if (s.access == Access::None || s.version >= e.version) return;
  if (e.update.empty() || s.own_ahead) {
    invalidate(e.page, s);  // a notice, or a copy an older update must not touch
    return;
  }
  if (s.version + 1 != e.version) {
    // Its predecessor may still come (by another path: a broadcast can
    // overtake a lock's log); until this rank's next acquire the copy may
    // stay as it is (settle_early_updates).
    s.early[e.version] = e.update;
    early_pages_.insert(e.page);
    return;
  }
  patch(e.page, s, e.update);
  for (auto it = s.early.begin(); it != s.early.end() && it->first <= s.version + 1; it = s.early.erase(it))
    if (it->first == s.version + 1) patch(e.page, s, it->second);
}

void RegcEngine::patch(PageId page, PageState &s, const std::vector<std::byte> &update) {
  // The next version of this copy. A dirty copy keeps its own writes and
  // patches its twin too, so that its diff stays its writes: a write not
  // yet sent can only be newer than an update to the same bytes (another
  // rank may have read an older value from the home's copy, and written
  // after it, before the home published it).
  const size_t size = host_.page_size();
  bool ok = s.dirty ? page_diff_apply_under(host_.frame(page), s.twin.data(), size, update.data(), update.size())
                    : page_diff_apply(host_.frame(page), size, update.data(), update.size());
  if (!ok) fatal("%s: malformed update of page %llu", name(), (unsigned long long)page);
  s.version++;
  host_.stats().updates_applied++;
}

void RegcEngine::settle_early_updates() {
  // Whatever is still missing is not coming in time: the copy must not be
  // older than what this rank was told of.
  for (PageId page : early_pages_) {
    PageState &s = state(page);
    if (s.access != Access::None && s.version < s.need) invalidate(page, s);
    s.early.clear();
  }
  early_pages_.clear();
}

void RegcEngine::apply_all(std::vector<RegcEntryRef> entries) {
  std::sort(entries.begin(), entries.end(), [](const RegcEntryRef &a, const RegcEntryRef &b) {
    return a->page != b->page ? a->page < b->page : a->version < b->version;
  });
  for (const auto &e : entries) apply(*e);
}

void RegcEngine::on_message(const MsgHeader &m, Payload p) {
  if (FlushObservers::handles(m.op)) {
    flush_message(m, p);
    return;
  }
  switch (m.op) {
    case kFetch:
      home_serve(m);
      break;
    case kPage:
      on_page(m, p);
      break;
    case kDiffs:
      home_apply_diffs(m, p);
      break;
    case kDiffsAck:
      on_diffs_ack(m, p);
      break;
    case kEntries:
      on_entries(m, p);
      break;
    case kEntriesAck:
      on_entries_ack();
      break;
    case kWriteBack:
      home_apply_writebacks(m, p);
      break;
    case kWriteBackAck:
      on_writebacks_ack(m, p);
      break;
    default:
      fatal("%s: unknown message op %u from rank %d", name(), (unsigned)m.op, m.src);
  }
}

}  // namespace agora
