// sc's batched writes: a write miss that follows the previous one to the same
// home takes the pages after it that are in exactly the same state -- idle,
// shared by the same copyset, which holds the writer -- as one transaction
// (a run): every page of it is busy at the home, each other reader gets one
// invalidation naming the run and answers with one acknowledgement, and the
// writer gets write access to all of them in one grant. An owner-computes
// code rewriting what its neighbours read pays one write fault per run.
//
// Each page still changes state only at its home, inside a transaction that
// excludes every other one on it, and write access is granted only once
// every other copy is gone: what single-page transactions guarantee, so
// sequential consistency holds (docs/sc.md).
#include <algorithm>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/sc/sc_engine.h"

namespace agora {

namespace {
constexpr PageId kNoLeader = ~PageId(0);
}

void ScEngine::home_write_request(PageId page, Request r, PageId extra, uint64_t epoch) {
  extra = std::min<PageId>(extra, options_.prefetch_max);
  if (extra == 0 || !host_.page_allocated(page)) {
    home_request(page, r);
    return;
  }
  const Rank home = host_.rank();
  DirEntry &e = entry(page);
  // Only a writer holding its copy (or the home, whose frame is current when
  // the page is shared) may take a run: the grant then carries no data.
  const bool holds = r.requester == home || (r.holds_copy && e.copyset[r.requester]);
  const PageId n = !e.busy && e.queue.empty() && e.owner < 0 && holds ? run_length(page, e, extra) : 0;
  if (n == 0) {
    home_request(page, r);
    return;
  }
  home_start_run(page, e, r, n + 1, epoch);
}

PageId ScEngine::run_length(PageId page, const DirEntry &e, PageId extra) {
  PageId n = 0;
  for (; n < extra; ++n) {
    const PageId q = page + 1 + n;
    if (q < page || host_.home_of(q) != host_.rank() || !host_.page_allocated(q)) break;
    auto it = directory_.find(q);
    if (it == directory_.end()) break;  // untouched: owned by the home, not shared
    const DirEntry &f = it->second;
    if (f.busy || !f.queue.empty() || f.owner >= 0 || f.copyset != e.copyset) break;
  }
  return n;
}

void ScEngine::home_start_run(PageId page, DirEntry &e, Request r, PageId pages, uint64_t epoch) {
  const Rank home = host_.rank();
  for (PageId i = 0; i < pages; ++i) {
    DirEntry &f = i == 0 ? e : directory_.at(page + i);
    f.busy = true;
    f.current = r;
    f.run_leader = page;
  }
  e.run_pages = pages;
  e.run_epoch = epoch;
  e.requester_had_copy = true;
  e.acks_left = 0;
  // The mutation forgets the last remote reader other than the writer.
  Rank skipped = -1;
  if (options_.mutation == EngineOptions::Mutation::ScBatchSkipsReader)
    for (Rank c = 0; c < host_.nranks(); ++c)
      if (e.copyset[c] && c != r.requester && c != home) skipped = c;
  for (Rank c = 0; c < host_.nranks(); ++c) {
    if (!e.copyset[c] || c == r.requester || c == skipped) continue;
    if (c == home) {
      for (PageId i = 0; i < pages; ++i) set_local(page + i, Access::None);
    } else {
      host_.stats().invalidations_sent += pages;  // copies invalidated, as for single pages
      host_.send_request(c, {Channel::Protocol, kInvalidateRun, 0, page, pages, 0});
      e.acks_left++;
    }
  }
  if (e.acks_left == 0) home_finish_run(page, e);
}

void ScEngine::home_on_run_ack(PageId page) {
  auto it = directory_.find(page);
  // A run forgotten meanwhile (its pages freed) awaits nothing.
  if (it == directory_.end() || !it->second.busy || it->second.run_pages < 2 || it->second.acks_left == 0) return;
  if (--it->second.acks_left == 0) home_finish_run(page, it->second);
}

void ScEngine::home_finish_run(PageId page, DirEntry &e) {
  const Rank home = host_.rank();
  const Request r = e.current;
  const PageId pages = e.run_pages;
  e.run_pages = 1;
  // The run's pages still in it (a free may have taken some), from the first.
  std::vector<std::pair<PageId, DirEntry *>> members;
  PageId granted = 0;  // contiguous from `page`
  for (PageId i = 0; i < pages; ++i) {
    auto it = directory_.find(page + i);
    if (it == directory_.end() || !it->second.busy || it->second.run_leader != page) continue;
    DirEntry &f = it->second;
    f.owner = r.requester;
    f.copyset.assign(host_.nranks(), false);
    f.busy = false;
    f.run_leader = kNoLeader;
    if (granted == i) granted++;
    members.emplace_back(page + i, &f);
  }
  if (r.requester == home) {
    for (auto it = members.rbegin(); it != members.rend(); ++it) complete_local(it->first, Access::Write, {});
  } else {
    host_.send(r.requester, {Channel::Protocol, kGrantWriteRun, 0, page, granted, e.run_epoch});
  }
  for (auto &[q, f] : members) home_drain(q, *f);
}

void ScEngine::home_abandon_run(PageId page, DirEntry &e) {
  for (PageId i = 1; i < e.run_pages; ++i) {
    auto it = directory_.find(page + i);
    if (it == directory_.end() || !it->second.busy || it->second.run_leader != page) continue;
    DirEntry &f = it->second;
    f.busy = false;
    f.run_leader = kNoLeader;
    // The home dropped its copy for the writer; other readers drop theirs
    // (listed until then, which costs at most an invalidation).
    if (f.current.requester != host_.rank()) f.copyset[host_.rank()] = false;
    home_drain(page + i, f);
  }
  e.run_pages = 1;
  e.run_leader = kNoLeader;
}

void ScEngine::on_invalidate_run(const MsgHeader &m) {
  for (PageId i = 0; i < m.b; ++i) {
    host_.stats().invalidations_received++;
    set_local(m.a + i, Access::None);
  }
  host_.send(m.src, {Channel::Protocol, kInvalidateRunAck, 0, m.a, m.b, 0});
}

void ScEngine::install_write_run(PageId first, PageId count, uint64_t epoch) {
  // After a forget the pages may be freed: keep the read copies (current:
  // the home lists this rank as their owner, so it fetches them from here)
  // rather than opening a freed page.
  if (epoch != forget_epoch_) return;
  for (PageId i = 0; i < count; ++i)
    if (local_access(first + i) == Access::Read) set_local(first + i, Access::Write);
}

}  // namespace agora
