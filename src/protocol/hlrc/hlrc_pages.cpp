// Requester side of hlrc: access faults, twins, page fetches and installs.

#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/hlrc/hlrc_engine.h"
#include "protocol/shared/page_copy_checks.h"

namespace agora {

HlrcEngine::HlrcEngine(EngineHost &host, const EngineOptions &options)
    : host_(host),
      options_(options),
      notices_(host.rank(), host.nranks()),
      previous_barrier_(host.nranks(), 0),
      applied_(host.nranks(), 0),
      prefetch_((uint32_t)std::min<uint64_t>(options.prefetch_max, kMaxFetchRun - 1)),
      flush_(host, options) {
  if (host.page_size() > 32768) fatal("hlrc: page size %zu exceeds 32 KiB", host.page_size());
  publish_home_meta();
}

HlrcEngine::PageState &HlrcEngine::state(PageId page) { return page_copy_state(pages_, host_, page, page_floor_); }

Access HlrcEngine::local_access(PageId page) const { return page_copy_access(pages_, host_, page); }

void HlrcEngine::on_fault(PageId page, Access need, Waiter *w) {
  PageState &s = state(page);
  if (s.access == Access::None && s.fetching) note_wanted(s);
  const bool planted = options_.cache_mutation == EngineOptions::CacheMutation::RefetchBeforeWriteBack;
  if (page_copy_fault(host_, page, s, need, w, &dirty_, false, planted)) fetch_after_miss(page, need);
  AGORA_ASSERT(page_copy_consistent(host_, page, s, false));
}

void HlrcEngine::fetch_after_miss(PageId page, Access need) {
  // The pages after it too while misses are sequential (one read or one
  // message for the run; shared/sequential_misses.h, page_copies.h).
  const uint32_t ahead = prefetch_.on_miss(host_.home_of(page), page);
  fetch_run(page, page_copy_fetch_run(pages_, host_, page, ahead, need,
                                      [this](PageId p) -> PageState & { return state(p); }));
}

void HlrcEngine::fetch_run(PageId first, uint32_t count) {
  for (PageId p = first; p < first + count; ++p) {
    PageState &s = state(p);
    s.fetching = true;
    s.refetch = false;
  }
  if (one_sided() && host_.read_remote(host_.home_of(first), first, count, (uint32_t)home_meta_bytes())) return;
  fetch_by_message(first, count);
}

void HlrcEngine::fetch_by_message(PageId first, uint32_t count) {
  host_.send_request(host_.home_of(first), {Channel::Protocol, kFetch, 0, first, count, 0});
}

void HlrcEngine::on_page(const MsgHeader &m, Payload p) {
  const PageId first = m.a;
  const uint64_t count = m.b ? m.b : 1;
  const size_t vbytes = 4 * (size_t)host_.nranks();
  if (count > kMaxFetchRun)
    fatal("hlrc: malformed page reply from rank %d (%llu pages)", m.src, (unsigned long long)count);
  size_t at = 0;
  AccessRuns runs;  // one protection change per run of pages installed
  host_.filling_frames(first, count);
  for (PageId page = first; page < first + count; ++page) {
    uint32_t status;
    if (at + 4 > p.size) fatal("hlrc: malformed page reply from rank %d", m.src);
    std::memcpy(&status, p.data + at, 4);
    at += 4;
    if (status != 0) {  // refused: not allocated at the home
      PageState &s = state(page);
      s.refreshing = false;
      if (s.fetching && s.access == Access::None) page_copy_refused(s, (int)(int32_t)status);
      continue;
    }
    if (at + vbytes + host_.page_size() > p.size) fatal("hlrc: malformed page reply from rank %d", m.src);
    VectorTime version = vector_time_read(p.data + at, host_.nranks());
    receive_copy(page, version, p.data + at + vbytes, page != first, false, &runs);
    at += vbytes + host_.page_size();
  }
  runs.apply(host_);
  if (at != p.size) fatal("hlrc: malformed page reply from rank %d (%zu bytes left over)", m.src, p.size - at);
}

void HlrcEngine::receive_copy(PageId page, const VectorTime &version, const std::byte *data, bool prefetched,
                              bool one_sided, AccessRuns *runs) {
  PageState &s = state(page);
  if (!s.fetching || s.access != Access::None) {  // a duplicate: already installed
    host_.stats().stale_replies++;
    return;
  }
  if (s.refetch) {  // a flush found this fetch outstanding: its reply may predate the flush
    host_.stats().stale_replies++;
    s.refetch = false;
    if (s.waiters.empty())
      s.fetching = s.want_write = s.write_ahead = false;
    else
      fetch_by_message(page, 1);
    return;
  }
  using M = EngineOptions::HlrcMutation;
  const bool refreshed = s.refreshing;
  s.refreshing = false;
  const bool check = !(options_.hlrc_mutation == M::InstallWithoutVersionCheck && (prefetched || one_sided)) &&
                     !(options_.hlrc_mutation == M::RefreshWithoutVersionCheck && refreshed);
  if (check && !s.need.empty())
    for (Rank i = 0; i < host_.nranks(); ++i)
      if (version[i] < s.need[i]) {  // served before a write we were told of reached the home
        host_.stats().stale_replies++;
        // Ask the home by message: it answers after every diff this rank
        // sent it before (one channel), and those announced by notices were
        // acknowledged before the notices left their writers. A prefetched
        // page nobody waits for is just left missing.
        if (s.waiters.empty())
          s.fetching = s.want_write = s.write_ahead = false;
        else
          fetch_by_message(page, 1);
        return;
      }
  note_refetched(s, refreshed);
  page_copy_install(host_, page, s, data, &dirty_, false, runs);
  if (refreshed)
    host_.stats().pages_refreshed++;
  else if (prefetched)
    host_.stats().pages_prefetched++;
}

void HlrcEngine::invalidate(PageId page, Rank creator, uint32_t index, AccessRuns *runs) {
  if (is_home(page) || creator == host_.rank()) return;  // the home copy already has it
  PageState &s = state(page);
  vector_time_raise(&s.need, host_.nranks(), creator, index);
  if (page_copy_invalidate(host_, page, s, runs)) note_invalidated(page, s);
}

void HlrcEngine::on_message(const MsgHeader &m, Payload p) {
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
      on_diffs_ack();
      break;
    case kWriteBack:
      home_apply_writebacks(m, p);
      break;
    case kWriteBackAck:
      on_writebacks_ack(m, p);
      break;
    default:
      fatal("hlrc: unknown message op %u from rank %d", (unsigned)m.op, m.src);
  }
}

}  // namespace agora
