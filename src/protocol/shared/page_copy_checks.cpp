#include "protocol/shared/page_copy_checks.h"

namespace agora {

bool page_copy_consistent(const EngineHost &host, PageId page, const PageCopy &s, bool twin_home) {
  const bool home = host.home_of(page) == host.rank();
  if (s.fetching && s.access != Access::None) return false;
  const bool awaited = s.fetching || s.writing_back;  // what a waiter waits for
  if (!s.waiters.empty() && !awaited) return false;
  if (s.want_write && !awaited) return false;
  if (s.write_ahead && !s.fetching) return false;
  if (s.written_ahead && !s.dirty) return false;
  if (s.writing_back && (home || s.fetching || s.dirty || s.access != Access::None)) return false;
  if (s.written_back && home) return false;
  const bool twinned = !home || twin_home;
  if (!s.twin.empty() != (s.dirty && twinned)) return false;
  if (!s.twin.empty() && s.twin.size() != host.page_size()) return false;
  if (s.access == Access::Write && !s.dirty && !(home && (!s.cached_elsewhere || s.writes_tracked))) return false;
  if (s.writes_tracked && !(home && s.cached_elsewhere)) return false;
  if (s.dirty && s.access == Access::Read) return false;
  if (s.cached_elsewhere && !home) return false;
  return true;
}

}  // namespace agora
