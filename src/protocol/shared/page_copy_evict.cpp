// Evicting a copy from the bounded cache (hlrc, regc): clean copies are
// dropped; dirty ones send their writes home first, as a diff against the
// twin taken from the frame right now, so the host may discard the frame
// as soon as the call returns. The interval's notice (or entry) about the
// page still comes when the interval closes (written_back).
#include "common/log.h"
#include "common/stats.h"
#include "protocol/shared/page_copies.h"
#include "protocol/shared/page_copy_checks.h"
#include "protocol/shared/page_diff.h"

namespace agora {

ProtocolEngine::Eviction page_copy_evict(EngineHost &host, PageId page, PageCopy &s, std::vector<std::byte> *writeback,
                                         EngineOptions::CacheMutation mutation) {
  using E = ProtocolEngine::Eviction;
  using M = EngineOptions::CacheMutation;
  AGORA_ASSERT(host.home_of(page) != host.rank());
  if (s.fetching || s.writing_back || !s.waiters.empty()) return E::Busy;
  if (s.access == Access::None && !s.dirty) return E::Dropped;  // nothing held
  if (s.access == Access::None) return E::Busy;                 // stale-dirty: its twin waits for a refetch
  // Protect first: a store racing with the eviction faults and waits.
  s.access = Access::None;
  host.set_access(page, Access::None);
  host.stats().cache_evictions++;
  page_copy_unchanged(host, page, s);  // fetched along for a write sweep, never written: clean
  if (!s.dirty) return E::Dropped;
  s.dirty = false;
  s.written_back = true;
  if (mutation == M::DropDirty) {  // planted bug: the writes are lost
    s.twin.clear();
    return E::Dropped;
  }
  size_t n = diff_batch_encode(writeback, page, host.frame(page), s.twin.data(), host.page_size());
  s.twin.clear();
  s.twin.shrink_to_fit();
  s.writing_back = true;
  host.stats().cache_writebacks++;
  host.stats().cache_writeback_bytes += n;
  return E::WritingBack;
}

bool page_copy_written_back(PageCopy &s) {
  s.writing_back = false;
  return !s.waiters.empty();
}

}  // namespace agora
