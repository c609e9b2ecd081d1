#include "omp/omp_work_share_state.h"

namespace agora::omp {

SlotEntry slot_enter(WorkShare *ws, uint64_t id, unsigned nthreads) {
  if (ws->id == id) return SlotEntry::Joined;
  if (ws->id != 0 && ws->left != nthreads) return SlotEntry::Busy;
  *ws = WorkShare{};
  ws->id = id;
  return SlotEntry::SetUp;
}

bool slot_leave(WorkShare *ws, unsigned nthreads) { return ++ws->left == nthreads; }

bool chunk_take(WorkShare *ws, ChunkCursor *c, unsigned nthreads, uint64_t *lo, uint64_t *hi) {
  bool got;
  uint64_t number = 0;
  if (ws->schedule == Schedule::Static) {
    number = c->static_next;
    got = static_chunk(ws->count, ws->chunk, nthreads, number, lo, hi);
    c->static_next += nthreads;
  } else {
    got = ws->schedule == Schedule::Guided ? guided_chunk(ws->count, ws->chunk, nthreads, &ws->next, lo, hi)
                                           : dynamic_chunk(ws->count, ws->chunk, &ws->next, lo, hi);
    if (got && ws->ordered) number = ws->chunks_out++;
  }
  if (got && ws->ordered) {
    c->held_chunk = number;
    c->holds_chunk = true;
  }
  return got;
}

bool ordered_my_turn(const WorkShare *ws, const ChunkCursor *c) {
  return c->holds_chunk && ws->ordered_turn == c->held_chunk;
}

void ordered_pass(WorkShare *ws, ChunkCursor *c) {
  ws->ordered_turn = c->held_chunk + 1;
  c->holds_chunk = false;
}

bool single_take(uint64_t *taken, uint64_t mine) {
  if (*taken >= mine) return false;
  *taken = mine;
  return true;
}

unsigned section_take(WorkShare *ws) {
  uint64_t lo, hi;
  return dynamic_chunk(ws->count, 1, &ws->next, &lo, &hi) ? (unsigned)(lo + 1) : 0;
}

}  // namespace agora::omp
