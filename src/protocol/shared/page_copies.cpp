#include "protocol/shared/page_copies.h"

#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "common/status.h"
#include "protocol/shared/page_copy_checks.h"
#include "protocol/shared/page_diff.h"

namespace agora {

namespace {
constexpr int kStatusUnallocated = AGORA_ERR_BAD_POINTER;

void wake(PageCopy &s, int status) {
  std::vector<Waiter *> waiters;
  waiters.swap(s.waiters);
  for (Waiter *w : waiters) w->complete(status);
}

void page_copy_make_dirty(EngineHost &host, PageId page, PageCopy &s, std::vector<PageId> *dirty, bool twin_home,
                          AccessRuns *runs = nullptr) {
  if (!s.dirty) {
    s.dirty = true;
    dirty->push_back(page);
    if (host.home_of(page) != host.rank() || twin_home) {
      const std::byte *f = host.frame(page);
      s.twin.assign(f, f + host.page_size());
      host.stats().twins++;
    }
  }
  s.access = Access::Write;
  if (runs)
    runs->add(page, Access::Write);
  else
    host.set_access(page, Access::Write);
}
}  // namespace

bool page_copy_fault(EngineHost &host, PageId page, PageCopy &s, Access need, Waiter *w, std::vector<PageId> *dirty,
                     bool twin_home, bool refetch_before_writeback) {
  if (host.home_of(page) == host.rank() && !host.page_allocated(page)) {
    w->complete(kStatusUnallocated);
    return false;
  }
  if (s.access == Access::None) {  // an invalid copy: fetch it, then retry
    s.waiters.push_back(w);
    s.want_write |= need == Access::Write;
    // An evicted dirty copy is fetched once its writes are home.
    return !s.fetching && (!s.writing_back || refetch_before_writeback);
  }
  if (need == Access::Write && s.access == Access::Read) page_copy_make_dirty(host, page, s, dirty, twin_home);
  w->complete(AGORA_OK);  // else another thread of this rank already resolved it
  return false;
}

void page_copy_install(EngineHost &host, PageId page, PageCopy &s, const std::byte *data, std::vector<PageId> *dirty,
                       bool twin_home, AccessRuns *runs) {
  const size_t size = host.page_size();
  if (s.dirty) {
    page_refresh_keeping_writes(host.frame(page), s.twin.data(), data, size);
    s.access = Access::Write;
  } else {
    host.replacing_frame(page);  // the frame's bytes are dead: the host may move it
    std::byte *frame = host.frame(page);
    if (frame != data) std::memcpy(frame, data, size);  // else the host placed the copy there
    s.access = Access::Read;
  }
  s.fetching = false;
  host.stats().pages_fetched++;
  if ((s.want_write || s.write_ahead) && !s.dirty) {
    page_copy_make_dirty(host, page, s, dirty, twin_home, runs);  // saves a second fault
    s.written_ahead = !s.want_write;
  } else if (runs) {
    runs->add(page, s.access);
  } else {
    host.set_access(page, s.access);
  }
  s.want_write = s.write_ahead = false;
  if (runs)
    runs->wake_after(&s.waiters, 0);
  else
    wake(s, 0);
  AGORA_ASSERT(page_copy_consistent(host, page, s, twin_home));
}

bool page_copy_unchanged(EngineHost &host, PageId page, PageCopy &s) {
  if (!s.written_ahead) return false;
  s.written_ahead = false;  // either way the caller ends the dirty state
  if (!s.dirty || s.twin.size() != host.page_size() ||
      std::memcmp(host.frame(page), s.twin.data(), host.page_size()) != 0)
    return false;
  s.dirty = false;
  s.twin.clear();
  s.twin.shrink_to_fit();
  return true;
}

void page_copy_refused(PageCopy &s, int status) {
  s.fetching = false;
  s.want_write = s.write_ahead = false;
  wake(s, status);
}

bool page_copy_share_home(EngineHost &host, PageId page, PageCopy &s) {
  if (s.cached_elsewhere) return false;
  s.cached_elsewhere = true;
  if (host.tracks_home_writes()) {
    s.writes_tracked = true;
    host.track_home_writes(page, 1);
    return true;
  }
  if (s.access == Access::Write && !s.dirty) {
    s.access = Access::Read;
    host.set_access(page, Access::Read);
  }
  AGORA_ASSERT(!s.cached_elsewhere || host.home_of(page) == host.rank());
  return false;
}

bool page_copy_invalidate(EngineHost &host, PageId page, PageCopy &s, AccessRuns *runs) {
  if (s.access == Access::None) return false;
  AGORA_ASSERT(!s.fetching && s.waiters.empty());  // only an invalid copy is fetched
  s.access = Access::None;
  if (runs)
    runs->add(page, Access::None);
  else
    host.set_access(page, Access::None);
  host.stats().notices_applied++;
  host.stats().invalidations_received++;
  return true;
}

}  // namespace agora
