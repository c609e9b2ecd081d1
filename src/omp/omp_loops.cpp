// Work-sharing loops (docs/openmp.md): GOMP_loop_*, GOMP_loop_ull_*,
// GOMP_parallel_loop_*, and the ordered turn. A static schedule without
// ordered needs nothing shared (each member computes its own chunks); the
// others keep their cursor and ordered turn in a work-share slot, taken
// under the team's lock: a dynamic chunk is one lock round trip.
// Ordered: chunks are numbered in the order they are handed out (static:
// by chunk index), and a chunk's ordered regions run when the turn reaches
// its number; a member passes the turn on when it finishes the chunk (asks
// for the next one, or ends the loop).
#include <cstring>

#include "omp/omp_fatal.h"
#include "omp/omp_team.h"

namespace agora::omp {

namespace {
struct LoopSpec {
  Schedule schedule;
  bool ordered;
  LoopBounds bounds;
  uint64_t chunk;
};

// Schedules resolved for this thread: runtime from its run-sched ICV, auto
// as static.
Schedule resolve(Schedule s) { return s == Schedule::Auto ? Schedule::Static : s; }

void loop_setup(WorkShare *ws, const void *arg) {
  const auto *spec = static_cast<const LoopSpec *>(arg);
  ws->kind = WorkKind::Loop;
  ws->schedule = resolve(spec->schedule);
  ws->ordered = spec->ordered;
  ws->bounds = spec->bounds;
  ws->count = loop_count(spec->bounds);
  ws->chunk = spec->chunk;
  if (ws->schedule != Schedule::Static && ws->chunk < 1) ws->chunk = 1;
}

// Ordered: wait for the held chunk's turn and pass it on (lock held).
void finish_held_chunk(Team *team, LoopCursor &c, const char *call) {
  if (!c.ws->ordered || !c.chunks.holds_chunk) return;
  while (!ordered_my_turn(c.ws, &c.chunks)) team_wait(team, call);
  ordered_pass(c.ws, &c.chunks);
  team_wake(team, call);
}

// A slot to take chunks or the ordered turn from, under the team's lock.
bool needs_lock(const LoopCursor &c) { return c.shared && (c.ws->ordered || c.ws->schedule != Schedule::Static); }

// The next chunk as loop values; false when the thread has no more.
// `locked`: the caller holds the team's lock (and it is released here).
bool loop_next(uint64_t *istart, uint64_t *iend, const char *call, bool locked) {
  ThreadState &t = thread_state();
  LoopCursor &c = t.loop;
  if (!c.ws) fatal("%s: called outside a work-sharing loop", call);
  Team *team = current_team();
  bool shared = needs_lock(c);
  if (shared && !locked) team_lock(team, call);
  if (shared) finish_held_chunk(team, c, call);
  uint64_t lo = 0, hi = 0;
  bool got = chunk_take(c.ws, &c.chunks, team->nthreads, &lo, &hi);
  if (shared || locked) team_unlock(team, call);
  if (!got) return false;
  *istart = loop_value(c.ws->bounds, c.ws->count, lo);
  *iend = loop_value(c.ws->bounds, c.ws->count, hi);
  return true;
}

// GOMP_loop_start's `mem`: *mem bytes shared by the team for this
// work-share, zeroed by the member that sets it up (lock held); *mem becomes
// the block's address.
void loop_memory(Team *team, WorkShare *ws, bool first, void **mem, const char *call) {
  unsigned slot = (unsigned)((ws->id - 1) % kWorkShareRing);
  if (first) {
    uint64_t bytes = (uint64_t)(uintptr_t)*mem;
    if (team->ws_mem_bytes[slot] < bytes) {
      if (team->ws_mem[slot]) agora_mem_free(team->ws_mem[slot]);
      team->ws_mem[slot] = nullptr;
      if (int status = agora_mem_malloc(bytes, &team->ws_mem[slot]))
        failed(call, "allocating the loop's shared block", status);
      team->ws_mem_bytes[slot] = bytes;
    }
    memset(team->ws_mem[slot], 0, bytes);
  }
  *mem = team->ws_mem[slot];
}

bool loop_start(const LoopSpec &given, uint64_t *istart, uint64_t *iend, const char *call, void **mem = nullptr) {
  Team *team = current_team();
  ThreadState &t = thread_state();
  LoopSpec spec = given;
  spec.schedule = resolve(spec.schedule);
  t.loop = LoopCursor{};
  if (spec.schedule == Schedule::Static && !spec.ordered && !mem) {
    // Nothing shared: every member computes its own chunks.
    loop_setup(&t.loop.own, &spec);
    t.loop.ws = &t.loop.own;
    t.loop.chunks.static_next = t.num;
    if (!istart) return true;
    return loop_next(istart, iend, call, false);
  }
  bool first;
  WorkShare *ws = work_share_enter(team, call, loop_setup, &spec, &first);
  loop_adopt(t, ws);
  if (mem) loop_memory(team, ws, first, mem, call);
  if (!istart) {  // GOMP_loop_start without a chunk wanted yet
    team_unlock(team, call);
    return true;
  }
  return loop_next(istart, iend, call, true);  // the lock work_share_enter took
}

// gcc 9+'s generic entry: sched is GFS_RUNTIME 0, STATIC 1, DYNAMIC 2,
// GUIDED 3, AUTO 4, with 0x80000000 for monotonic.
Schedule runtime_schedule(uint64_t *chunk);
Schedule decode_schedule(long sched, uint64_t *chunk) {
  switch (sched & 0x7fffffffL) {
    case 0:
      return runtime_schedule(chunk);
    case 1:
      return Schedule::Static;
    case 2:
      return Schedule::Dynamic;
    case 3:
      return Schedule::Guided;
    case 4:
      return Schedule::Auto;
    default:
      fatal("GOMP_loop_start: schedule code %ld is not one gcc emits", sched);
  }
}
void no_task_reductions(uintptr_t *reductions, const char *call) {
  if (reductions)
    fatal(
        "%s: task reductions (reduction(task, ...) on a loop) are not supported by Agora's OpenMP runtime "
        "(docs/openmp.md)",
        call);
}

void loop_end_nowait(const char *call) {
  ThreadState &t = thread_state();
  LoopCursor &c = t.loop;
  if (c.shared) {
    Team *team = current_team();
    team_lock(team, call);
    finish_held_chunk(team, c, call);
    if (slot_leave(c.ws, team->nthreads)) team_wake(team, call);
    team_unlock(team, call);
  }
  c = LoopCursor{};
}

LoopBounds long_bounds(long start, long end, long incr) {
  return LoopBounds{false, incr > 0, (uint64_t)start, (uint64_t)end, (uint64_t)incr};
}
LoopBounds ull_bounds(bool up, unsigned long long start, unsigned long long end, unsigned long long incr) {
  return LoopBounds{true, up, start, end, incr};
}

bool long_start(Schedule s, bool ordered, long start, long end, long incr, long chunk, long *istart, long *iend,
                const char *call) {
  LoopSpec spec{s, ordered, long_bounds(start, end, incr), chunk > 0 ? (uint64_t)chunk : 0};
  uint64_t a, b;
  if (!loop_start(spec, &a, &b, call)) return false;
  *istart = (long)a;
  *iend = (long)b;
  return true;
}
// gcc 9+'s GOMP_loop*_start family: a null istart asks only for the work
// share to be set up (no chunk taken).
template <class T>
bool start_optional(const LoopSpec &spec, T *istart, T *iend, const char *call, void **mem) {
  uint64_t a, b;
  if (!loop_start(spec, istart ? &a : nullptr, &b, call, mem)) return false;
  if (istart) {
    *istart = (T)a;
    *iend = (T)b;
  }
  return true;
}
bool long_next(long *istart, long *iend, const char *call) {
  uint64_t a, b;
  if (!loop_next(&a, &b, call, false)) return false;
  *istart = (long)a;
  *iend = (long)b;
  return true;
}
bool ull_start(Schedule s, bool ordered, bool up, unsigned long long start, unsigned long long end,
               unsigned long long incr, unsigned long long chunk, unsigned long long *istart, unsigned long long *iend,
               const char *call) {
  LoopSpec spec{s, ordered, ull_bounds(up, start, end, incr), chunk};
  uint64_t a, b;
  if (!loop_start(spec, &a, &b, call)) return false;
  *istart = a;
  *iend = b;
  return true;
}
bool ull_next(unsigned long long *istart, unsigned long long *iend, const char *call) {
  uint64_t a, b;
  if (!loop_next(&a, &b, call, false)) return false;
  *istart = a;
  *iend = b;
  return true;
}

void parallel_loop(void (*fn)(void *), void *data, unsigned num_threads, Schedule s, long start, long end, long incr,
                   long chunk, const char *call) {
  LoopSpec spec{s, false, long_bounds(start, end, incr), chunk > 0 ? (uint64_t)chunk : 0};
  ThreadState saved;
  Team *team = team_begin(fn, data, num_threads, call, loop_setup, &spec, &saved);
  fn(data);
  team_end(team, saved, call);
}

Schedule runtime_schedule(uint64_t *chunk) {
  ThreadState &t = thread_state();
  *chunk = t.run_chunk;
  return t.run_schedule;
}
}  // namespace

void loop_adopt(ThreadState &t, WorkShare *ws) {
  LoopCursor &c = t.loop;
  c = LoopCursor{};
  c.ws = ws;
  c.shared = true;
  c.chunks.static_next = t.num;
}

}  // namespace agora::omp

using namespace agora::omp;
using ull = unsigned long long;

// One start/next pair per schedule, for long and unsigned long long loops;
// "nonmonotonic" and "maybe_nonmonotonic" are the same schedules here.
#define AGORA_OMP_LOOP(NAME, SCHED, ORDERED)                                                                      \
  bool GOMP_loop_##NAME##_start(long start, long end, long incr, long chunk, long *istart, long *iend) {          \
    return long_start(SCHED, ORDERED, start, end, incr, chunk, istart, iend, "GOMP_loop_" #NAME "_start");        \
  }                                                                                                               \
  bool GOMP_loop_##NAME##_next(long *istart, long *iend) {                                                        \
    return long_next(istart, iend, "GOMP_loop_" #NAME "_next");                                                   \
  }                                                                                                               \
  bool GOMP_loop_ull_##NAME##_start(bool up, ull start, ull end, ull incr, ull chunk, ull *istart, ull *iend) {   \
    return ull_start(SCHED, ORDERED, up, start, end, incr, chunk, istart, iend, "GOMP_loop_ull_" #NAME "_start"); \
  }                                                                                                               \
  bool GOMP_loop_ull_##NAME##_next(ull *istart, ull *iend) {                                                      \
    return ull_next(istart, iend, "GOMP_loop_ull_" #NAME "_next");                                                \
  }
#define AGORA_OMP_RUNTIME_LOOP(NAME, ORDERED)                                                                 \
  bool GOMP_loop_##NAME##_start(long start, long end, long incr, long *istart, long *iend) {                  \
    uint64_t chunk;                                                                                           \
    Schedule s = runtime_schedule(&chunk);                                                                    \
    return long_start(s, ORDERED, start, end, incr, (long)chunk, istart, iend, "GOMP_loop_" #NAME "_start");  \
  }                                                                                                           \
  bool GOMP_loop_##NAME##_next(long *istart, long *iend) {                                                    \
    return long_next(istart, iend, "GOMP_loop_" #NAME "_next");                                               \
  }                                                                                                           \
  bool GOMP_loop_ull_##NAME##_start(bool up, ull start, ull end, ull incr, ull *istart, ull *iend) {          \
    uint64_t chunk;                                                                                           \
    Schedule s = runtime_schedule(&chunk);                                                                    \
    return ull_start(s, ORDERED, up, start, end, incr, chunk, istart, iend, "GOMP_loop_ull_" #NAME "_start"); \
  }                                                                                                           \
  bool GOMP_loop_ull_##NAME##_next(ull *istart, ull *iend) {                                                  \
    return ull_next(istart, iend, "GOMP_loop_ull_" #NAME "_next");                                            \
  }

extern "C" {

AGORA_OMP_LOOP(static, Schedule::Static, false)
AGORA_OMP_LOOP(dynamic, Schedule::Dynamic, false)
AGORA_OMP_LOOP(guided, Schedule::Guided, false)
AGORA_OMP_LOOP(nonmonotonic_dynamic, Schedule::Dynamic, false)
AGORA_OMP_LOOP(nonmonotonic_guided, Schedule::Guided, false)
AGORA_OMP_LOOP(ordered_static, Schedule::Static, true)
AGORA_OMP_LOOP(ordered_dynamic, Schedule::Dynamic, true)
AGORA_OMP_LOOP(ordered_guided, Schedule::Guided, true)
AGORA_OMP_RUNTIME_LOOP(runtime, false)
AGORA_OMP_RUNTIME_LOOP(nonmonotonic_runtime, false)
AGORA_OMP_RUNTIME_LOOP(maybe_nonmonotonic_runtime, false)
AGORA_OMP_RUNTIME_LOOP(ordered_runtime, true)

bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long *istart, long *iend,
                     uintptr_t *reductions, void **mem) {
  no_task_reductions(reductions, "GOMP_loop_start");
  uint64_t c = chunk > 0 ? (uint64_t)chunk : 0;
  Schedule s = decode_schedule(sched, &c);
  LoopSpec spec{s, false, long_bounds(start, end, incr), c};
  return start_optional(spec, istart, iend, "GOMP_loop_start", mem);
}
bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk, long *istart, long *iend,
                             uintptr_t *reductions, void **mem) {
  no_task_reductions(reductions, "GOMP_loop_ordered_start");
  uint64_t c = chunk > 0 ? (uint64_t)chunk : 0;
  Schedule s = decode_schedule(sched, &c);
  LoopSpec spec{s, true, long_bounds(start, end, incr), c};
  return start_optional(spec, istart, iend, "GOMP_loop_ordered_start", mem);
}
bool GOMP_loop_ull_start(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull *istart, ull *iend,
                         uintptr_t *reductions, void **mem) {
  no_task_reductions(reductions, "GOMP_loop_ull_start");
  uint64_t c = chunk;
  Schedule s = decode_schedule(sched, &c);
  LoopSpec spec{s, false, ull_bounds(up, start, end, incr), c};
  return start_optional(spec, istart, iend, "GOMP_loop_ull_start", mem);
}
bool GOMP_loop_ull_ordered_start(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull *istart, ull *iend,
                                 uintptr_t *reductions, void **mem) {
  no_task_reductions(reductions, "GOMP_loop_ull_ordered_start");
  uint64_t c = chunk;
  Schedule s = decode_schedule(sched, &c);
  LoopSpec spec{s, true, ull_bounds(up, start, end, incr), c};
  return start_optional(spec, istart, iend, "GOMP_loop_ull_ordered_start", mem);
}

void GOMP_loop_end(void) {
  loop_end_nowait("GOMP_loop_end");
  GOMP_barrier();
}
void GOMP_loop_end_nowait(void) { loop_end_nowait("GOMP_loop_end_nowait"); }
bool GOMP_loop_end_cancel(void) {
  GOMP_loop_end();
  return false;
}

// Combined parallel loops: the team starts inside the loop's work-share.
#define AGORA_OMP_PARALLEL_LOOP(NAME, SCHED)                                                                 \
  void GOMP_parallel_loop_##NAME(void (*fn)(void *), void *data, unsigned num_threads, long start, long end, \
                                 long incr, long chunk, unsigned flags) {                                    \
    (void)flags;                                                                                             \
    parallel_loop(fn, data, num_threads, SCHED, start, end, incr, chunk, "GOMP_parallel_loop_" #NAME);       \
  }
AGORA_OMP_PARALLEL_LOOP(static, Schedule::Static)
AGORA_OMP_PARALLEL_LOOP(dynamic, Schedule::Dynamic)
AGORA_OMP_PARALLEL_LOOP(guided, Schedule::Guided)
AGORA_OMP_PARALLEL_LOOP(nonmonotonic_dynamic, Schedule::Dynamic)
AGORA_OMP_PARALLEL_LOOP(nonmonotonic_guided, Schedule::Guided)

#define AGORA_OMP_PARALLEL_RUNTIME_LOOP(NAME)                                                                \
  void GOMP_parallel_loop_##NAME(void (*fn)(void *), void *data, unsigned num_threads, long start, long end, \
                                 long incr, unsigned flags) {                                                \
    (void)flags;                                                                                             \
    uint64_t chunk;                                                                                          \
    Schedule s = runtime_schedule(&chunk);                                                                   \
    parallel_loop(fn, data, num_threads, s, start, end, incr, (long)chunk, "GOMP_parallel_loop_" #NAME);     \
  }
AGORA_OMP_PARALLEL_RUNTIME_LOOP(runtime)
AGORA_OMP_PARALLEL_RUNTIME_LOOP(nonmonotonic_runtime)
AGORA_OMP_PARALLEL_RUNTIME_LOOP(maybe_nonmonotonic_runtime)

void GOMP_ordered_start(void) {
  ThreadState &t = thread_state();
  LoopCursor &c = t.loop;
  if (!c.shared || !c.ws->ordered) return;  // no ordered loop: nothing to wait for
  if (!c.chunks.holds_chunk)
    agora::omp::fatal("GOMP_ordered_start: ordered region outside an iteration of an ordered loop");
  Team *team = current_team();
  team_lock(team, "GOMP_ordered_start");
  while (!ordered_my_turn(c.ws, &c.chunks)) team_wait(team, "GOMP_ordered_start");
  team_unlock(team, "GOMP_ordered_start");
}

// The turn passes when the member finishes its chunk (next or end).
void GOMP_ordered_end(void) {}

}  // extern "C"
