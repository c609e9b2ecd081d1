// Work-share slots (docs/openmp.md): every member meets the team's
// work-sharing constructs in the same order, so the n-th one it meets is
// slot n mod kWorkShareRing; the first member to reach it sets it up,
// under the team's lock. With nowait a member may run ahead: it waits
// (on the team's condition variable) only if its slot still holds a
// work-share some member has not left.
#include "omp/omp_team.h"

namespace agora::omp {

WorkShare *work_share_enter(Team *team, const char *call, WorkShareSetup init, const void *arg, bool *first) {
  ThreadState &t = thread_state();
  uint64_t id = ++t.ws_next;  // ids from 1: 0 marks a slot never used
  WorkShare *ws = &team->ws[(id - 1) % kWorkShareRing];
  team_lock(team, call);
  SlotEntry entry;
  while ((entry = slot_enter(ws, id, team->nthreads)) == SlotEntry::Busy)
    team_wait(team, call);  // an older work-share, not yet left by everyone
  *first = entry == SlotEntry::SetUp;
  if (*first) {
    init(ws, arg);
    ws->id = id;
  }
  return ws;  // the lock still held: the caller reads the slot, then unlocks
}

void work_share_leave(Team *team, WorkShare *ws, const char *call) {
  team_lock(team, call);
  if (slot_leave(ws, team->nthreads)) team_wake(team, call);
  team_unlock(team, call);
}

}  // namespace agora::omp
