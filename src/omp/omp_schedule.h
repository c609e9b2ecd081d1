// The OpenMP runtime's chunk arithmetic (docs/openmp.md): how a work-sharing
// loop's iterations are counted and cut into chunks for each schedule. Pure:
// no MPI, no OS, no Agora call, so that the unit tests can check it against
// a shadow model; the caller keeps the shared state (`next`) where every
// rank can take it under the team's lock.
#pragma once
#include <cstdint>

namespace agora::omp {

enum class Schedule : uint32_t { Static = 1, Dynamic = 2, Guided = 3, Auto = 4 };

// A loop `for (v = start; v <cond> end; v += incr)` as gcc passes it: signed
// long bounds, or unsigned long long ones with `up` saying the direction
// (a downward ull loop passes incr as a negative number, two's complement).
struct LoopBounds {
  bool ull = false;
  bool up = true;  // long loops: incr > 0
  uint64_t start = 0, end = 0, incr = 0;
};

// Iterations of the loop (0 if none).
uint64_t loop_count(const LoopBounds &b);
// The loop variable's value at iteration i (i <= count): start + i * incr,
// except that the end of the last chunk is `end` itself, as libgomp gives
// it (the compiled code only compares the variable with it).
uint64_t loop_value(const LoopBounds &b, uint64_t count, uint64_t i);

// The k-th chunk (k = thread + m * nthreads for the thread's m-th chunk) of
// a static schedule: [*lo, *hi). chunk 0 is "no chunk size": one block of
// ceil(count / nthreads) per thread. False when the thread has no k-th chunk.
bool static_chunk(uint64_t count, uint64_t chunk, unsigned nthreads, uint64_t k, uint64_t *lo, uint64_t *hi);
// The block size of a static schedule without a chunk size (what
// static_chunk uses for chunk 0), at least 1.
uint64_t static_block(uint64_t count, unsigned nthreads);

// The next chunk of a dynamic or guided schedule from the shared cursor
// *next (iterations handed out so far): [*lo, *hi), *next advanced. False
// when every iteration has been handed out. chunk >= 1. Guided hands out
// ceil(remaining / nthreads), never less than chunk (nor more than remain).
bool dynamic_chunk(uint64_t count, uint64_t chunk, uint64_t *next, uint64_t *lo, uint64_t *hi);
bool guided_chunk(uint64_t count, uint64_t chunk, unsigned nthreads, uint64_t *next, uint64_t *lo, uint64_t *hi);

// OMP_SCHEDULE's value ("[monotonic:|nonmonotonic:]kind[,chunk]", kind one
// of static, dynamic, guided, auto): false if it is not one.
bool parse_schedule(const char *text, Schedule *kind, uint64_t *chunk);

}  // namespace agora::omp
