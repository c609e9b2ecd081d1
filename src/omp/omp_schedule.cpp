#include "omp/omp_schedule.h"

#include <strings.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace agora::omp {

uint64_t loop_count(const LoopBounds &b) {
  if (b.ull) {
    if (b.up) return b.start < b.end && b.incr ? (b.end - b.start - 1) / b.incr + 1 : 0;
    uint64_t step = 0 - b.incr;
    return b.start > b.end && step ? (b.start - b.end - 1) / step + 1 : 0;
  }
  int64_t start = (int64_t)b.start, end = (int64_t)b.end, incr = (int64_t)b.incr;
  // In 128 bits: end - start of two longs may not fit in one.
  if (incr > 0 && start < end) return (uint64_t)(((__int128)end - start - 1) / incr + 1);
  if (incr < 0 && start > end) return (uint64_t)(((__int128)start - end - 1) / -(__int128)incr + 1);
  return 0;
}

uint64_t loop_value(const LoopBounds &b, uint64_t count, uint64_t i) {
  if (i >= count) return b.end;
  return b.start + i * b.incr;  // modulo 2^64: the result is in range
}

uint64_t static_block(uint64_t count, unsigned nthreads) {
  uint64_t block = count / nthreads + (count % nthreads ? 1 : 0);
  return block ? block : 1;
}

bool static_chunk(uint64_t count, uint64_t chunk, unsigned nthreads, uint64_t k, uint64_t *lo, uint64_t *hi) {
  if (chunk == 0) {
    if (k >= nthreads) return false;
    chunk = static_block(count, nthreads);
  }
  uint64_t first;
  if (__builtin_mul_overflow(k, chunk, &first) || first >= count) return false;
  *lo = first;
  *hi = count - first < chunk ? count : first + chunk;
  return true;
}

bool dynamic_chunk(uint64_t count, uint64_t chunk, uint64_t *next, uint64_t *lo, uint64_t *hi) {
  if (*next >= count) return false;
  uint64_t remain = count - *next;
  *lo = *next;
  *hi = *lo + (remain < chunk ? remain : chunk);
  *next = *hi;
  return true;
}

bool guided_chunk(uint64_t count, uint64_t chunk, unsigned nthreads, uint64_t *next, uint64_t *lo, uint64_t *hi) {
  if (*next >= count) return false;
  uint64_t remain = count - *next;
  uint64_t size = remain / nthreads + (remain % nthreads ? 1 : 0);
  if (size < chunk) size = chunk;
  if (size > remain) size = remain;
  *lo = *next;
  *hi = *lo + size;
  *next = *hi;
  return true;
}

bool parse_schedule(const char *text, Schedule *kind, uint64_t *chunk) {
  while (isspace((unsigned char)*text)) text++;
  for (const char *modifier : {"monotonic:", "nonmonotonic:"}) {
    size_t n = strlen(modifier);
    if (strncasecmp(text, modifier, n) == 0) text += n;
  }
  static const struct {
    const char *name;
    Schedule kind;
  } kinds[] = {{"static", Schedule::Static},
               {"dynamic", Schedule::Dynamic},
               {"guided", Schedule::Guided},
               {"auto", Schedule::Auto}};
  for (const auto &k : kinds) {
    size_t n = strlen(k.name);
    if (strncasecmp(text, k.name, n) != 0) continue;
    const char *rest = text + n;
    while (isspace((unsigned char)*rest)) rest++;
    *kind = k.kind;
    *chunk = 0;
    if (*rest == '\0') return true;
    if (*rest != ',' || k.kind == Schedule::Auto) return false;
    rest++;
    char *stop = nullptr;
    errno = 0;
    long long value = strtoll(rest, &stop, 10);
    while (stop && isspace((unsigned char)*stop)) stop++;
    if (errno || stop == rest || *stop != '\0' || value < 1) return false;
    *chunk = (uint64_t)value;
    return true;
  }
  return false;
}

}  // namespace agora::omp
