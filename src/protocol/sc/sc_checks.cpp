// Invariants of sc's directory, checked by AGORA_ASSERT in debug builds
// (AGORA_CHECKS) after every transaction at the home.
#include <algorithm>

#include "protocol/sc/sc_engine.h"

namespace agora {

bool ScEngine::entry_consistent(PageId page, const DirEntry &e) const {
  const Rank n = host_.nranks(), home = host_.rank();
  if ((Rank)e.copyset.size() != n || e.owner < -1 || e.owner >= n) return false;
  // Exclusive (one owner, no readers) or shared (no owner, some readers):
  // a Modified page never has readers, a shared one always has one.
  const auto readers = std::count(e.copyset.begin(), e.copyset.end(), true);
  if (e.owner >= 0 ? readers != 0 : readers == 0) return false;
  if (e.busy) return true;                                           // mid-transaction: the rest holds once it ends
  if (e.acks_left != 0 || !e.queue.empty()) return false;            // idle entries wait for nothing
  if (e.run_pages != 1 || e.run_leader != ~PageId(0)) return false;  // and are in no run
  // The home's own copy allows exactly what the entry grants it.
  const Access expected = e.owner == home   ? Access::Write
                          : e.owner >= 0    ? Access::None
                          : e.copyset[home] ? Access::Read
                                            : Access::None;
  return local_access(page) == expected;
}

}  // namespace agora
