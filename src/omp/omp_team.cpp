// Parallel regions (docs/openmp.md): GOMP_parallel and the old
// GOMP_parallel_start/end. The master allocates the team in global memory,
// starts members 1..n-1 as agora threads placed over the ranks as program
// mode places pthreads (AGORA_THREADS_PER_RANK per rank, the master's slot
// first), runs its own share, then joins them: creation and join carry the
// memory consistency the region's start and end need under every protocol.
// A region inside another runs serialised (a team of one).
#include <cstring>

#include "omp/omp_fatal.h"
#include "omp/omp_team.h"

namespace agora::omp {

namespace {
thread_local ThreadState tls_state;
thread_local Team *tls_implicit_team;  // orphaned constructs outside any region

// Beyond this a request is a mistake, not a team.
constexpr unsigned kMaxTeam = 4096;

Team *team_allocate(unsigned nthreads, const char *call) {
  size_t bytes = sizeof(Team) + nthreads * (sizeof(MemberStart) + sizeof(agora_thread_t));
  void *memory = nullptr;
  int status = agora_mem_malloc(bytes, &memory);
  if (status != AGORA_OK) failed(call, "allocating the team in global memory", status);
  memset(memory, 0, bytes);
  auto *team = static_cast<Team *>(memory);
  team->starts = reinterpret_cast<MemberStart *>(team + 1);
  team->threads = reinterpret_cast<agora_thread_t *>(team->starts + nthreads);
  team->nthreads = nthreads;
  return team;
}

void team_free(Team *team, const char *call) {
  for (unsigned i = 0; i < kWorkShareRing; i++)
    if (team->ws_mem[i]) agora_mem_free(team->ws_mem[i]);
  if (team->nthreads > 1) agora_thread_barrier_destroy(&team->barrier);
  agora_cond_destroy(&team->changed);
  int status = agora_mem_free(team);
  if (status != AGORA_OK) failed(call, "freeing the team", status);
}

void adopt_team(ThreadState &t, Team *team, unsigned num) {
  t.team = team;
  t.num = num;
  t.ws_next = 0;
  t.single_next = 0;
  t.loop = LoopCursor{};
  t.sections = nullptr;
  t.single_copy = nullptr;
  t.icvs_set = true;
  t.nthreads_var = team->nthreads_var;
  t.run_schedule = team->run_schedule;
  t.run_chunk = team->run_chunk;
  if (team->first_work_share) {
    t.ws_next = 1;
    if (team->ws[0].kind == WorkKind::Sections)
      t.sections = &team->ws[0];
    else
      loop_adopt(t, &team->ws[0]);
  }
}

// A member's thread (members 1..n-1), on whichever rank it was placed.
void *member_main(void *arg) {
  auto *start = static_cast<MemberStart *>(arg);
  ThreadState &t = tls_state;
  t = ThreadState{};  // an OS thread may have served an earlier agora thread
  adopt_team(t, start->team, start->num);
  start->team->fn(start->team->data);
  t = ThreadState{};
  return nullptr;
}
}  // namespace

ThreadState &thread_state() {
  ThreadState &t = tls_state;
  if (!t.icvs_set) initial_icvs(t);
  return t;
}

Team *current_team() {
  ThreadState &t = thread_state();
  if (t.team) return t.team;
  if (!tls_implicit_team) {
    require_program_mode("an OpenMP construct");
    Team *team = team_allocate(1, "an OpenMP construct");
    team->nthreads_var = t.nthreads_var;
    team->run_schedule = t.run_schedule;
    team->run_chunk = t.run_chunk;
    tls_implicit_team = team;
  }
  return tls_implicit_team;
}

void require_program_mode(const char *call) {
  if (!agora_program_mode())
    fatal(
        "%s: this OpenMP program is not running under Agora's program mode; build it with agoracc -fopenmp "
        "(which links Agora's OpenMP runtime instead of libgomp) and start it with agorarun",
        call);
}

void failed(const char *call, const char *what, int status) {
  fatal("%s: %s failed: %s", call, what, agora_strerror(status));
}

void team_lock(Team *team, const char *call) {
  if (int status = agora_lock(&team->lock)) failed(call, "taking the team's lock", status);
}
void team_unlock(Team *team, const char *call) {
  if (int status = agora_unlock(&team->lock)) failed(call, "releasing the team's lock", status);
}
void team_wait(Team *team, const char *call) {
  if (int status = agora_cond_wait(&team->changed, &team->lock)) failed(call, "waiting for the team", status);
}
void team_wake(Team *team, const char *call) {
  if (int status = agora_cond_broadcast(&team->changed)) failed(call, "waking the team", status);
}
void team_barrier(Team *team, const char *call) {
  if (team->nthreads <= 1) return;
  int status = agora_thread_barrier_wait(&team->barrier);
  if (status != AGORA_OK && status != AGORA_BARRIER_SERIAL) failed(call, "the team's barrier", status);
}

Team *team_begin(void (*fn)(void *), void *data, unsigned requested, const char *call, WorkShareSetup setup,
                 const void *setup_arg, ThreadState *saved) {
  require_program_mode(call);
  ThreadState &t = thread_state();
  unsigned nthreads = requested ? requested : (unsigned)t.nthreads_var;
  if (nthreads > kMaxTeam)
    fatal(
        "%s: a team of %u threads asked for (num_threads, omp_set_num_threads or OMP_NUM_THREADS); "
        "at most %u are supported, and only %d run at once (%d ranks x AGORA_THREADS_PER_RANK)",
        call, nthreads, kMaxTeam, agora_thread_slots(), agora_nranks());
  if (t.team) nthreads = 1;  // nested: serialised
  if (nthreads == 0) nthreads = 1;
  Team *team = team_allocate(nthreads, call);
  team->fn = fn;
  team->data = data;
  team->parent = t.team;
  team->parent_num = t.team ? t.num : 0;
  team->level = t.team ? t.team->level + 1 : 1;
  team->active_level = (t.team ? t.team->active_level : 0) + (nthreads > 1 ? 1 : 0);
  team->nthreads_var = t.nthreads_var;
  team->run_schedule = t.run_schedule;
  team->run_chunk = t.run_chunk;
  if (setup) {
    setup(&team->ws[0], setup_arg);
    team->ws[0].id = 1;
    team->first_work_share = 1;
  }
  if (nthreads > 1) {
    if (int status = agora_thread_barrier_init(&team->barrier, nthreads))
      failed(call, "initialising the team's barrier", status);
  }
  int nranks = agora_nranks(), slots = agora_thread_slots();
  int per_rank = slots > 0 && nranks > 0 ? slots / nranks : 1;
  if (per_rank < 1) per_rank = 1;
  int master_rank = agora_rank();
  for (unsigned i = 1; i < nthreads; i++) {
    team->starts[i] = MemberStart{team, i};
    int rank = (int)((master_rank + i / (unsigned)per_rank) % (unsigned)nranks);
    if (int status = agora_thread_create_on(&team->threads[i], rank, member_main, &team->starts[i]))
      failed(call, "starting a team thread", status);
  }
  *saved = t;
  adopt_team(t, team, 0);
  return team;
}

void team_end(Team *team, const ThreadState &saved, const char *call) {
  for (unsigned i = 1; i < team->nthreads; i++) {
    if (int status = agora_thread_join(team->threads[i], nullptr)) failed(call, "joining a team thread", status);
  }
  tls_state = saved;
  team_free(team, call);
}

}  // namespace agora::omp

using namespace agora::omp;

extern "C" {

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags) {
  (void)flags;  // proc_bind: accepted, threads are placed by Agora
  ThreadState saved;
  Team *team = team_begin(fn, data, num_threads, "GOMP_parallel", nullptr, nullptr, &saved);
  fn(data);
  team_end(team, saved, "GOMP_parallel");
}

// gcc before 4.9: the master calls fn itself between these.
void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads) {
  ThreadState saved;
  Team *team = team_begin(fn, data, num_threads, "GOMP_parallel_start", nullptr, nullptr, &saved);
  team->master_saved = new ThreadState(saved);
}
void GOMP_parallel_end(void) {
  ThreadState &t = thread_state();
  if (!t.team || t.num != 0 || !t.team->master_saved)
    agora::omp::fatal("GOMP_parallel_end: not the master of a region begun by GOMP_parallel_start");
  auto *saved = static_cast<ThreadState *>(t.team->master_saved);
  ThreadState copy = *saved;
  delete saved;
  team_end(t.team, copy, "GOMP_parallel_end");
}

void GOMP_barrier(void) {
  ThreadState &t = thread_state();
  if (t.team) team_barrier(t.team, "GOMP_barrier");
}

bool GOMP_barrier_cancel(void) {
  GOMP_barrier();
  return false;
}

}  // extern "C"
