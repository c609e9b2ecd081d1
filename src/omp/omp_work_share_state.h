// The state of one work-sharing construct of a team, and the steps the
// members take on it (docs/openmp.md). Pure: no MPI, no OS, no Agora call.
// Each step runs under the team's lock (omp_loops.cpp,
// omp_single_sections.cpp, omp_work_share.cpp hold it), so that the slot's
// words are consistent under every protocol; the unit tests drive the same
// steps for a team of virtual members under random interleavings against a
// shadow model (tests/unit/omp_work_share_test.cpp).
#pragma once
#include <cstdint>

#include "omp/omp_schedule.h"

namespace agora::omp {

enum class WorkKind : uint32_t { Loop = 1, Sections = 2, SingleCopy = 3 };

struct WorkShare {
  uint64_t id;    // its work-share number + 1 (0: never used)
  uint32_t left;  // members that have ended it (free again at nthreads)
  WorkKind kind;
  Schedule schedule;
  uint32_t ordered;
  LoopBounds bounds;
  uint64_t count;         // iterations
  uint64_t chunk;         // as given (0: none)
  uint64_t next;          // dynamic/guided: iterations handed out
  uint64_t chunks_out;    // dynamic/guided ordered: chunks handed out (their numbers)
  uint64_t ordered_turn;  // the chunk whose ordered regions may run now
  uint32_t claimed;       // single copyprivate: the executing thread is chosen
  uint32_t pad;
  void *copyprivate;  // single copyprivate: the executing thread's data
};

// A member reaching work-share `id` (ids from 1) in its slot: Set up (this
// member is the first: the slot was reset, the caller fills it), Joined
// (another member set it up), or Busy (the slot still holds an older
// work-share some member has not left: wait and retry).
enum class SlotEntry { SetUp, Joined, Busy };
SlotEntry slot_enter(WorkShare *ws, uint64_t id, unsigned nthreads);
// The member has ended the work-share; true when it was the last one (the
// slot is free: wake the waiters).
bool slot_leave(WorkShare *ws, unsigned nthreads);

// A member's place in a loop work-share (its TLS).
struct ChunkCursor {
  uint64_t static_next;  // static: the member's next chunk number
  uint64_t held_chunk;   // ordered: the number of the chunk in hand
  bool holds_chunk;
};
// The member's next chunk [*lo, *hi) of loop work-share *ws (static: from
// the member's own cursor, nothing shared; dynamic/guided: the slot's
// cursor). Ordered loops number the chunk. False when none is left.
bool chunk_take(WorkShare *ws, ChunkCursor *c, unsigned nthreads, uint64_t *lo, uint64_t *hi);
// Ordered: may the member run the ordered regions of its chunk now?
bool ordered_my_turn(const WorkShare *ws, const ChunkCursor *c);
// Ordered: the member finished its chunk, whose turn it is: the turn passes
// to the next chunk.
void ordered_pass(WorkShare *ws, ChunkCursor *c);

// single: a member meeting its `mine`-th single construct (from 1) runs it
// if the team has taken fewer than that; *taken counts the team's.
bool single_take(uint64_t *taken, uint64_t mine);

// sections: the next section (1..count) of the slot, 0 if none is left.
unsigned section_take(WorkShare *ws);

}  // namespace agora::omp
