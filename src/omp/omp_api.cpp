// The omp_* routines a program calls (docs/openmp.md): team queries from
// the calling thread's state, ICVs of its data environment. The processors
// are the job's slots (ranks x AGORA_THREADS_PER_RANK).
#include "omp/omp_fatal.h"
#include "omp/omp_team.h"

using namespace agora::omp;

extern "C" {

int omp_get_num_threads(void) {
  ThreadState &t = thread_state();
  return t.team ? (int)t.team->nthreads : 1;
}
int omp_get_thread_num(void) { return (int)thread_state().num; }
int omp_get_max_threads(void) { return thread_state().nthreads_var; }
void omp_set_num_threads(int n) {
  if (n < 1) agora::omp::fatal("omp_set_num_threads(%d): the count must be at least 1", n);
  thread_state().nthreads_var = n;
}
int omp_get_num_procs(void) {
  int slots = agora_program_mode() ? agora_thread_slots() : 1;
  return slots > 0 ? slots : 1;
}
int omp_in_parallel(void) {
  ThreadState &t = thread_state();
  return t.team && t.team->active_level > 0;
}
int omp_get_level(void) {
  ThreadState &t = thread_state();
  return t.team ? (int)t.team->level : 0;
}
int omp_get_active_level(void) {
  ThreadState &t = thread_state();
  return t.team ? (int)t.team->active_level : 0;
}

// The team at `level` (0: the initial one) around the caller, and the
// ancestor's thread number in it.
static bool ancestor(int level, Team **team, unsigned *num) {
  ThreadState &t = thread_state();
  Team *at = t.team;
  unsigned n = t.num;
  int here = at ? (int)at->level : 0;
  if (level < 0 || level > here) return false;
  while (here > level) {
    n = at->parent_num;
    at = at->parent;
    here--;
  }
  *team = at;
  *num = n;
  return true;
}
int omp_get_ancestor_thread_num(int level) {
  Team *team;
  unsigned num;
  return ancestor(level, &team, &num) ? (int)num : -1;
}
int omp_get_team_size(int level) {
  Team *team;
  unsigned num;
  if (!ancestor(level, &team, &num)) return -1;
  return team ? (int)team->nthreads : 1;
}

void omp_set_dynamic(int value) { thread_state().dynamic_var = value != 0; }
int omp_get_dynamic(void) { return thread_state().dynamic_var; }
// Nested regions run serialised: nesting stays off.
void omp_set_nested(int) {}
int omp_get_nested(void) { return 0; }
void omp_set_max_active_levels(int) {}
int omp_get_max_active_levels(void) { return 1; }
int omp_get_supported_active_levels(void) { return 1; }
int omp_get_thread_limit(void) { return 4096; }

// omp_sched_t: static 1, dynamic 2, guided 3, auto 4 (| 0x80000000 monotonic).
void omp_set_schedule(int kind, int chunk) {
  unsigned base = (unsigned)kind & 0x7fffffffu;
  if (base < 1 || base > 4) agora::omp::fatal("omp_set_schedule(%d, %d): not a schedule kind (1..4)", kind, chunk);
  ThreadState &t = thread_state();
  t.run_schedule = (Schedule)base;
  t.run_chunk = chunk > 0 ? (uint64_t)chunk : 0;
  if (t.run_schedule != Schedule::Static && t.run_chunk == 0) t.run_chunk = 1;
}
void omp_get_schedule(int *kind, int *chunk) {
  ThreadState &t = thread_state();
  *kind = (int)t.run_schedule;
  *chunk = (int)t.run_chunk;
}

double omp_get_wtime(void) { return agora_wtime(); }
double omp_get_wtick(void) { return 1e-9; }

int omp_in_final(void) { return 0; }
int omp_get_cancellation(void) { return 0; }
int omp_get_proc_bind(void) { return 0; }  // omp_proc_bind_false: Agora places the threads
int omp_get_num_places(void) { return 0; }
int omp_get_max_task_priority(void) { return 0; }
int omp_get_default_device(void) { return 0; }
void omp_set_default_device(int) {}
int omp_get_num_devices(void) { return 0; }
int omp_get_num_teams(void) { return 1; }
int omp_get_team_num(void) { return 0; }
int omp_is_initial_device(void) { return 1; }
int omp_get_initial_device(void) { return 0; }

}  // extern "C"
