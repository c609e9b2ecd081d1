// Copies of pages in a home-based multiple-writer protocol (hlrc, regc): the
// per-page state both keep and the steps they take alike. A home holds the
// reference copy; other ranks fetch copies, write them under a twin and are
// told (by notices or updates, per protocol) when a copy is stale. What the
// protocols add, each in its own state type deriving from PageCopy, is how
// they version pages and when copies go stale.
#pragma once
#include <unordered_map>
#include <vector>

#include "protocol/engine.h"
#include "protocol/shared/access_runs.h"

namespace agora {

struct PageCopy {
  Access access = Access::None;
  bool dirty = false;     // written in the open interval
  bool fetching = false;  // a fetch is outstanding
  // ... whose reply may predate writes this rank must see (regc: a diff it
  // sent after the fetch; both: a flush that found the fetch outstanding):
  // the reply is not installed, the page is asked for again.
  bool refetch = false;
  bool want_write = false;  // a waiter of the fetch is a write: install dirty
  // Fetched along after a write miss (a sweep that writes): installed
  // writable and twinned too, though no thread waits to write it ...
  bool write_ahead = false;
  // ... and dirty only for that so far: an unchanged page (empty diff) was
  // not written, and its close or eviction sends nothing (page_copy_unchanged).
  bool written_ahead = false;
  // Home pages: another rank has fetched a copy. Until then the home's
  // writes are not tracked (nobody else can have seen them); from then on
  // the page is write-protected at the start of every interval.
  bool cached_elsewhere = false;
  // Home pages cached elsewhere whose writes the host tracks
  // (EngineHost::track_home_writes): they stay writable instead.
  bool writes_tracked = false;
  // Bounded cache (page_copy_evict.cpp): the copy was evicted dirty and its
  // writes are on their way home (a fault waits for the acknowledgement,
  // so that the copy fetched next holds them) ...
  bool writing_back = false;
  // ... and the open interval wrote it: its close still sends the page a
  // (possibly empty) diff, which numbers the version its notice requires.
  bool written_back = false;
  std::vector<std::byte> twin;  // while dirty (home pages: if the protocol wants one)
  std::vector<Waiter *> waiters;
};

// The state of `page`, made on first use: home pages start writable at
// `home_version` (a floor above freed pages' versions), others invalid.
template <typename State, typename Version>
State &page_copy_state(std::unordered_map<PageId, State> &pages, const EngineHost &host, PageId page,
                       const Version &home_version) {
  auto it = pages.find(page);
  if (it != pages.end()) return it->second;
  State &s = pages[page];
  const bool home = host.home_of(page) == host.rank();
  s.access = home ? Access::Write : Access::None;
  if (home) s.version = home_version;
  return s;
}

template <typename State>
Access page_copy_access(const std::unordered_map<PageId, State> &pages, const EngineHost &host, PageId page) {
  auto it = pages.find(page);
  if (it != pages.end()) return it->second.access;
  return host.home_of(page) == host.rank() ? Access::Write : Access::None;
}

// An access fault. Completes the waiter, or queues it and returns true when
// the page must be fetched (and no fetch is outstanding yet). The first
// write of an interval marks the page dirty (in *dirty) and takes a twin,
// unless it is a home page and `twin_home` is false.
// (refetch_before_writeback: the tester's planted bug, see CacheMutation.)
bool page_copy_fault(EngineHost &host, PageId page, PageCopy &s, Access need, Waiter *w, std::vector<PageId> *dirty,
                     bool twin_home, bool refetch_before_writeback = false);

// A flush of a page this rank holds no valid copy of: the next access
// fetches the home's page. A fetch already on its way may have been served
// before the writes this flush must show reached the home: it is asked for
// again when it arrives (docs/flush.md, "unmapped").
inline void page_copy_flushed_unmapped(PageCopy &s) {
  if (s.fetching) s.refetch = true;
}

// A copy from the home arrived: install it (keeping this rank's unsent
// writes: 2-way diffing), make it dirty at once for a waiting writer, and
// wake the waiters. With `runs`, the protection change and the wake-ups
// wait for runs->apply (a batch of copies).
void page_copy_install(EngineHost &host, PageId page, PageCopy &s, const std::byte *data, std::vector<PageId> *dirty,
                       bool twin_home, AccessRuns *runs = nullptr);

// ProtocolEngine::frame_in_use for these protocols: only a dirty copy's
// frame (its unsent writes, merged into the next copy fetched) outlives its
// access. `mutation` (the tester's planted bug): no frame is kept.
template <typename State>
bool page_copy_frame_in_use(const std::unordered_map<PageId, State> &pages, const EngineHost &host, PageId page,
                            bool mutation = false) {
  if (host.home_of(page) == host.rank()) return true;
  auto it = pages.find(page);
  return it != pages.end() && it->second.dirty && !mutation;
}

// A copy made dirty only by write_ahead whose frame still equals its twin:
// no thread wrote it, so there is nothing to send or announce. Clears its
// dirty state (and twin) and returns true; false otherwise.
bool page_copy_unchanged(EngineHost &host, PageId page, PageCopy &s);

// The home refused the fetch (the page is not allocated): fail the waiters.
void page_copy_refused(PageCopy &s, int status);

// At the home, before a copy leaves for the first time: from now on the
// home's writes must be tracked. Protect before copying, so that a write
// racing with the copy faults and is tracked; or, where the host tracks
// writes (EngineHost::track_home_writes), leave the page writable and start
// tracking before the copy is taken, so that a write the copy lacks is
// reported. True if tracking by the host began with this call.
bool page_copy_share_home(EngineHost &host, PageId page, PageCopy &s);

// A page's status in a fetch reply of a run (hlrc's and regc's kPage): 0
// served (its version and bytes follow), else refused with the error a
// thread touching it gets (not allocated at the home).
inline void page_reply_status(std::vector<std::byte> *reply, int32_t status) {
  const std::byte *b = reinterpret_cast<const std::byte *>(&status);
  reply->insert(reply->end(), b, b + 4);
}

// The pages a fetch after a miss on `page` takes: it and up to `ahead` after
// it (the prefetch window) with the same home, missing here and not on their
// way. After a write miss the pages after it come writable (write_ahead): a
// sweep that writes (STREAM's a[]) would otherwise fault again on each; one
// left unwritten sends nothing at the close (page_copy_unchanged).
template <typename State, typename StateOf>
uint32_t page_copy_fetch_run(const std::unordered_map<PageId, State> &pages, const EngineHost &host, PageId page,
                             uint32_t ahead, Access need, StateOf state_of) {
  const Rank home = host.home_of(page);
  uint32_t count = 1;
  for (; count <= ahead; ++count) {
    const PageId p = page + count;
    if (p < page || host.home_of(p) != home) break;
    auto it = pages.find(p);
    if (it != pages.end() && (it->second.access != Access::None || it->second.fetching || it->second.writing_back))
      break;
  }
  if (need == Access::Write)
    for (PageId p = page + 1; p < page + count; ++p) state_of(p).write_ahead = true;
  return count;
}

// The copy is stale: protect it (a dirty copy keeps its twin, for 2-way
// diffing). False if it already was invalid. With `runs`, the protection
// change waits for runs->apply, which must come before any thread of the
// rank is let past the acquire that brought the notice.
bool page_copy_invalidate(EngineHost &host, PageId page, PageCopy &s, AccessRuns *runs = nullptr);

// ---- the bounded cache (page_copy_evict.cpp) --------------------------------
// Drops a copy homed elsewhere to make room (ProtocolEngine::evict). A clean
// copy just goes; a dirty one is protected, diffed against its twin into
// *writeback (the caller sends it home now, kWriteBack) and marked
// writing_back and written_back. Busy while a fetch or a write-back of it is
// out or a thread waits on it. `mutation`: the tester's planted bugs.
ProtocolEngine::Eviction page_copy_evict(EngineHost &host, PageId page, PageCopy &s, std::vector<std::byte> *writeback,
                                         EngineOptions::CacheMutation mutation);

// The home acknowledged a write-back: a thread waiting on the page may fetch
// it now. True if one waits (the caller fetches it).
bool page_copy_written_back(PageCopy &s);

}  // namespace agora
