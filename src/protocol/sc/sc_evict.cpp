// sc and the bounded cache (AGORA_CACHE, docs/cache.md): evicting a copy.
//
// A read copy is dropped silently: the home still lists this rank in the
// copyset, and an invalidation of a copy it no longer holds is acknowledged
// as ever (sc_requester.cpp), so a writer is never kept waiting; a later
// write request says it holds no copy, so the home sends the page.
//
// A written copy (this rank the owner) goes home whole (kWriteBack). Until
// the home acknowledges, the page is kept here (writing_back_) and threads
// touching it wait. The home takes it back only if this rank still owns it
// and no transaction is in progress; otherwise a fetch of the home already
// crossed the write-back (same channel, in order: the home's kFetch was sent
// before it saw the write-back, and this rank answers it from the kept page),
// and the fetch's data moves the page on. A busy page (a request of this
// rank in flight, e.g. an upgrade that counts on the read copy, or a read
// copy a write request in flight names as part of its run) is not evicted.
#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/sc/sc_engine.h"

namespace agora {

ProtocolEngine::Eviction ScEngine::evict(PageId page) {
  using M = EngineOptions::CacheMutation;
  if (host_.home_of(page) == host_.rank()) return Eviction::Busy;  // homes keep their pages
  if (writing_back_.count(page)) return Eviction::Busy;
  if ((pending_.count(page) || in_run_.count(page)) && options_.cache_mutation != M::EvictPending)
    return Eviction::Busy;
  const Access a = local_access(page);
  if (a == Access::None) return Eviction::Dropped;
  set_local(page, Access::None);  // protect first: a racing store faults and waits
  host_.stats().cache_evictions++;
  if (a == Access::Read || options_.cache_mutation == M::DropDirty) return Eviction::Dropped;
  WriteBack &wb = writing_back_[page];
  const std::byte *f = host_.frame(page);
  wb.page.assign(f, f + host_.page_size());
  host_.send_request(host_.home_of(page), {Channel::Protocol, kWriteBack, 0, page, 0, 0},
                     {wb.page.data(), wb.page.size()});
  host_.stats().cache_writebacks++;
  host_.stats().cache_writeback_bytes += host_.page_size();
  return Eviction::WritingBack;
}

bool ScEngine::reclaim_home(PageId page) {
  // The home takes its page back as if it wrote it: every other copy is
  // invalidated (or the owner's fetched), then the home holds it writable.
  // No thread waits: the request is the home's own, answered locally.
  if (host_.home_of(page) != host_.rank() || !host_.page_allocated(page)) return false;
  if (local_access(page) == Access::Write) return true;
  if (pending_.count(page)) return false;
  DirEntry &e = entry(page);
  if (e.busy || !e.queue.empty()) return false;
  pending_.try_emplace(page);
  home_request(page, {host_.rank(), Access::Write, local_access(page) >= Access::Read});
  return true;
}

void ScEngine::mark_run(PageId page, PageId extra) {
  if (extra == 0) return;
  run_asked_[page] = extra;
  for (PageId q = page + 1; q <= page + extra; ++q) in_run_[q]++;
}

void ScEngine::unmark_run(PageId page) {
  auto it = run_asked_.find(page);
  if (it == run_asked_.end()) return;
  for (PageId q = page + 1; q <= page + it->second; ++q)
    if (auto m = in_run_.find(q); m != in_run_.end() && --m->second == 0) in_run_.erase(m);
  run_asked_.erase(it);
}

void ScEngine::home_on_writeback(PageId page, Rank from, Payload p) {
  if (host_.page_allocated(page)) {
    DirEntry &e = entry(page);
    if (!e.busy && e.owner == from) {  // still the owner: the home's copy becomes the only one
      std::memcpy(host_.frame(page), p.data, host_.page_size());
      e.owner = host_.rank();
      set_local(page, Access::Write);
    }
    // Else a fetch from `from` crossed it (busy, or already done): its data
    // carries the same page.
    AGORA_ASSERT(entry_consistent(page, e));
  }
  host_.send(from, {Channel::Protocol, kWriteBackAck, 0, page, 0, 0});
}

void ScEngine::on_writeback_ack(PageId page) {
  auto it = writing_back_.find(page);
  if (it == writing_back_.end()) return;  // freed meanwhile
  std::vector<Waiter *> waiters = std::move(it->second.waiters);
  writing_back_.erase(it);
  for (Waiter *w : waiters) w->complete(AGORA_OK);  // they fault again and ask the home
}

}  // namespace agora
