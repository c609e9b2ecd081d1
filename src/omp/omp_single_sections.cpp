// single, single with copyprivate, and sections (docs/openmp.md).
// GOMP_single_start: the team counts the single constructs taken; a member
// meeting its n-th one takes it if the team has taken fewer than n (under
// the team's lock), as libgomp does with a compare-and-swap. copyprivate and
// sections use a work-share slot: the executing thread's data pointer, the
// next section to hand out.
#include "omp/omp_fatal.h"
#include "omp/omp_team.h"

namespace agora::omp {
namespace {
void single_copy_setup(WorkShare *ws, const void *) { ws->kind = WorkKind::SingleCopy; }

void sections_setup(WorkShare *ws, const void *arg) {
  ws->kind = WorkKind::Sections;
  ws->schedule = Schedule::Dynamic;
  ws->count = *static_cast<const unsigned *>(arg);
  ws->chunk = 1;
}
}  // namespace
}  // namespace agora::omp

using namespace agora::omp;

extern "C" {

bool GOMP_single_start(void) {
  ThreadState &t = thread_state();
  Team *team = current_team();
  uint64_t mine = ++t.single_next;
  if (team->nthreads == 1) return true;
  team_lock(team, "GOMP_single_start");
  bool taken = single_take(&team->single_next, mine);
  team_unlock(team, "GOMP_single_start");
  return taken;
}

// NULL for the thread that runs the single's body; the others wait for its
// GOMP_single_copy_end and get its data.
void *GOMP_single_copy_start(void) {
  Team *team = current_team();
  bool first;
  WorkShare *ws = work_share_enter(team, "GOMP_single_copy_start", single_copy_setup, nullptr, &first);
  bool mine = !ws->claimed;
  ws->claimed = 1;
  team_unlock(team, "GOMP_single_copy_start");
  if (mine) {
    thread_state().single_copy = ws;  // GOMP_single_copy_end's slot
    return nullptr;
  }
  team_barrier(team, "GOMP_single_copy_start");  // the runner has published its data
  team_lock(team, "GOMP_single_copy_start");
  void *data = ws->copyprivate;
  if (slot_leave(ws, team->nthreads)) team_wake(team, "GOMP_single_copy_start");
  team_unlock(team, "GOMP_single_copy_start");
  return data;
}

void GOMP_single_copy_end(void *data) {
  Team *team = current_team();
  ThreadState &t = thread_state();
  WorkShare *ws = t.single_copy;
  if (!ws) agora::omp::fatal("GOMP_single_copy_end: not after GOMP_single_copy_start");
  t.single_copy = nullptr;
  team_lock(team, "GOMP_single_copy_end");
  ws->copyprivate = data;
  if (slot_leave(ws, team->nthreads)) team_wake(team, "GOMP_single_copy_end");
  team_unlock(team, "GOMP_single_copy_end");
  team_barrier(team, "GOMP_single_copy_end");
}

unsigned GOMP_sections_start(unsigned count) {
  Team *team = current_team();
  bool first;
  WorkShare *ws = work_share_enter(team, "GOMP_sections_start", sections_setup, &count, &first);
  unsigned section = section_take(ws);
  team_unlock(team, "GOMP_sections_start");
  thread_state().sections = ws;
  return section;
}

unsigned GOMP_sections_next(void) {
  Team *team = current_team();
  WorkShare *ws = thread_state().sections;
  if (!ws) agora::omp::fatal("GOMP_sections_next: not inside a sections construct");
  team_lock(team, "GOMP_sections_next");
  unsigned section = section_take(ws);
  team_unlock(team, "GOMP_sections_next");
  return section;
}

void GOMP_sections_end_nowait(void) {
  WorkShare *ws = thread_state().sections;
  if (!ws) agora::omp::fatal("GOMP_sections_end: not inside a sections construct");
  thread_state().sections = nullptr;
  work_share_leave(current_team(), ws, "GOMP_sections_end");
}

void GOMP_sections_end(void) {
  GOMP_sections_end_nowait();
  GOMP_barrier();
}

bool GOMP_sections_end_cancel(void) {
  GOMP_sections_end();
  return false;
}

void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads, unsigned count, unsigned flags) {
  (void)flags;
  ThreadState saved;
  Team *team = team_begin(fn, data, num_threads, "GOMP_parallel_sections", sections_setup, &count, &saved);
  fn(data);
  team_end(team, saved, "GOMP_parallel_sections");
}

}  // extern "C"
