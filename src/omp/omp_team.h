// The OpenMP runtime's team (docs/openmp.md). A team and its work-share
// slots live in global memory (agora_mem_malloc, homed on the master's
// rank), so every member on every rank reads and writes the same words;
// they are read and written only under the team's lock (an address-named
// Agora lock), or set by the master before the members start (thread
// creation is a release and an acquire). What is per thread (which team,
// which work-share comes next, the loop chunk in hand) is in the thread's
// TLS: private, as each member's own.
#pragma once
#include <cstdint>

#include "agora/agora.h"
#include "omp/omp_schedule.h"
#include "omp/omp_work_share_state.h"

namespace agora::omp {

// Work-shares a thread may be ahead of the slowest member (nowait loops,
// single, sections): the ring of slots each team keeps. A thread that
// reaches a slot still in use waits until every member has left it.
constexpr unsigned kWorkShareRing = 32;

struct Team;
// What a member started on another rank reads first (arg of its thread).
struct MemberStart {
  Team *team;
  unsigned num;
};

struct Team {
  agora_lock_t lock;     // zero: the lock named by its address
  agora_cond_t changed;  // with lock: a slot was freed, an ordered turn passed
  agora_thread_barrier_t barrier;
  void (*fn)(void *);
  void *data;
  unsigned nthreads;
  unsigned level;         // nested parallel regions around the team's code (1: outermost)
  unsigned active_level;  // of those, the ones with more than one thread
  unsigned parent_num;    // the master's number in the enclosing team
  Team *parent;           // the enclosing team (nullptr: the initial one)
  uint64_t single_next;   // single constructs taken so far (GOMP_single_start)
  // ICVs the members inherit from the master.
  Schedule run_schedule;
  uint64_t run_chunk;
  int nthreads_var;
  int first_work_share;  // the master set up slot 0 (combined parallel loop, sections)
  void *master_saved;    // GOMP_parallel_start: the master's state before (private to it)
  WorkShare ws[kWorkShareRing];
  // GOMP_loop_start's `mem` (lastprivate(conditional:)): a block per slot in
  // global memory, zeroed for each work-share that asks for one.
  void *ws_mem[kWorkShareRing];
  uint64_t ws_mem_bytes[kWorkShareRing];
  MemberStart *starts;      // [nthreads], same allocation
  agora_thread_t *threads;  // [nthreads], same allocation (0: the master)
};

// The loop a thread is working through (TLS).
struct LoopCursor {
  WorkShare *ws;  // the team's slot, or `own` for a static loop without ordered
  bool shared;    // ws is the team's slot (read under the team's lock)
  WorkShare own;  // a static loop's bounds: nothing shared
  ChunkCursor chunks;
};

// The calling thread's OpenMP state (TLS).
struct ThreadState {
  Team *team;  // nullptr: not in a parallel region (the initial thread)
  unsigned num;
  uint64_t ws_next;      // work-shares this thread has entered in its team
  uint64_t single_next;  // single constructs it has met
  LoopCursor loop;
  WorkShare *sections;     // the sections construct it is in
  WorkShare *single_copy;  // the single copyprivate whose body it runs
  // ICVs of the thread's data environment.
  bool icvs_set;
  int nthreads_var;
  Schedule run_schedule;
  uint64_t run_chunk;
  int dynamic_var;
};

ThreadState &thread_state();
// The team of the calling thread; outside any parallel region a team of one
// made on first use (orphaned work-sharing constructs, a barrier).
Team *current_team();
// The ICVs from the environment (OMP_NUM_THREADS, OMP_SCHEDULE, ...), read
// once per process, for the initial thread.
void initial_icvs(ThreadState &t);
// Ends the job with a message naming the call, if Agora does not run the
// program (an OpenMP program not built with agoracc).
void require_program_mode(const char *call);
[[noreturn]] void failed(const char *call, const char *what, int status);

// Team lock held by the caller.
void team_lock(Team *team, const char *call);
void team_unlock(Team *team, const char *call);
void team_wait(Team *team, const char *call);  // for `changed`, lock held
void team_wake(Team *team, const char *call);  // broadcast `changed`, lock held
void team_barrier(Team *team, const char *call);

// A region (omp_team.cpp): the team made and its members started, the
// caller made its master (its state before kept in *saved). `setup`, if
// given, sets up the team's first work-share (a combined parallel loop or
// sections), which every member then starts in.
using WorkShareSetup = void (*)(WorkShare *, const void *);
Team *team_begin(void (*fn)(void *), void *data, unsigned requested, const char *call, WorkShareSetup setup,
                 const void *setup_arg, ThreadState *saved);
// The members joined, the master's state restored, the team freed.
void team_end(Team *team, const ThreadState &saved, const char *call);
// The thread takes up the loop of a work-share set up before it entered
// (omp_loops.cpp).
void loop_adopt(ThreadState &t, WorkShare *ws);

// Work-shares (omp_work_share.cpp): enter the calling thread's next one;
// `init` sets it up if this thread is the first to reach it. Returns the
// slot with the team's lock held (the caller reads it, then unlocks);
// *first says whether this thread set it up.
WorkShare *work_share_enter(Team *team, const char *call, WorkShareSetup init, const void *arg, bool *first);
void work_share_leave(Team *team, WorkShare *ws, const char *call);

// The job-wide locks of unnamed critical and GOMP_atomic_start (in a page of
// the program's shared .bss, the same address on every rank).
agora_lock_t *job_critical_lock();
agora_lock_t *job_atomic_lock();

}  // namespace agora::omp

// The team barrier, as gcc calls it (omp_team.cpp); the construct ends use it.
extern "C" void GOMP_barrier(void);
