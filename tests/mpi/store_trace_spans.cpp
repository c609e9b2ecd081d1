// Store tracing on real ranks (built with clang -fsanitize-coverage=
// func,trace-stores by agora_add_clang_executable TRACED): inside a span the
// callbacks record exactly the bytes this program stores to global memory
// -- 1, 2, 4, 8 and 16-byte stores, a loop, a range across a page boundary,
// a nested span -- and nothing for private memory or outside spans. The
// spans are opened here around agora_lock/agora_unlock (the runtime does
// not call the store-trace API itself yet). Then every rank checks the
// others' values after a barrier, and a lock counter runs traced.
//
//   agorarun -n 2 store_trace_spans [iterations]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "agora/agora.h"
#include "runtime/store_trace.h"

using agora::TracedRange;

namespace {

int g_failures = 0;

void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAIL %s\n", agora_rank(), what);
    ++g_failures;
  }
}

void check_ranges(const std::vector<TracedRange> &got, const std::vector<TracedRange> &want, uintptr_t base,
                  const char *what) {
  if (got == want) return;
  std::fprintf(stderr, "rank %d: FAIL %s: recorded", agora_rank(), what);
  for (auto &r : got) std::fprintf(stderr, " [+%lu,%u)", (unsigned long)(r.first - base), r.second);
  std::fprintf(stderr, "; stored");
  for (auto &r : want) std::fprintf(stderr, " [+%lu,%u)", (unsigned long)(r.first - base), r.second);
  std::fprintf(stderr, "\n");
  ++g_failures;
}

// Values rank r stores, so that other ranks can check them.
uint8_t v8(int r) { return (uint8_t)(0x10 + r); }
uint16_t v16(int r) { return (uint16_t)(0x2000 + r); }
uint32_t v32(int r) { return 0x30000000u + (uint32_t)r; }
uint64_t v64(int r) { return 0x4000000000000000ull + (uint64_t)r; }
double vd(int r, int i) { return r * 1000.0 + i; }

}  // namespace

int main(int argc, char **argv) {
  if (agora_init(&argc, &argv) != AGORA_OK) return 1;
  int iterations = argc > 1 ? std::atoi(argv[1]) : 200;
  int me = agora_rank(), n = agora_nranks();
  const size_t page = 4096;
  // Each rank's region: 3 pages, its first stores 24 bytes before a page end.
  void *region = nullptr, *count = nullptr;
  agora_lock_t locks[2];
  if (agora_mem_alloc((size_t)n * 3 * page, &region) != AGORA_OK ||
      agora_mem_alloc(sizeof(uint64_t), &count) != AGORA_OK || agora_lock_array_init(locks, 2) != AGORA_OK) {
    std::fprintf(stderr, "rank %d: allocation failed\n", me);
    return 1;
  }
  auto *g = (uint8_t *)region;
  auto *counter = (uint64_t *)count;
  agora_lock_t *lock = &locks[0], *inner_lock = &locks[1];
  check(agora::store_trace_active(), "store_trace_active() in a traced program");
  uintptr_t base = (uintptr_t)g;
  uint8_t *mine = g + (size_t)me * 3 * page;
  size_t off = page - 24;  // within `mine`
  volatile uint64_t private_words[8];

  // Outside any span: not recorded.
  mine[0] = 1;
  check(agora::store_trace_pending() == 0, "a store outside spans was recorded");

  agora_lock(lock);
  agora::store_trace_span_enter();
  private_words[0] = 7;                     // private: ignored
  mine[off] = v8(me);                       // [off, off+1)
  *(uint16_t *)(mine + off + 1) = v16(me);  // [off+1, off+3): merges
  *(uint32_t *)(mine + off + 3) = v32(me);  // [off+3, off+7)
  *(uint64_t *)(mine + off + 7) = v64(me);  // [off+7, off+15)
  __int128 wide = ((__int128)v64(me) << 64) | v32(me);
  *(__int128 *)(mine + off + 16) = wide;  // [off+16, off+32): across the page end
  auto *d = (double *)(mine + page + 512);
  for (int i = 0; i < 100; ++i) d[i] = vd(me, i);  // [page+512, +800)
  // Nested span: its exit hands out its own stores only.
  agora_lock(inner_lock);
  agora::store_trace_span_enter();
  *(uint32_t *)(mine + 2 * page + 100) = v32(me);
  std::vector<TracedRange> inner;
  check(agora::store_trace_span_exit(&inner), "inner span exit");
  agora_unlock(inner_lock);
  check_ranges(inner, {{(uintptr_t)(mine + 2 * page + 100), 4}}, base, "inner span");
  private_words[1] = 8;
  std::vector<TracedRange> outer;
  check(agora::store_trace_span_exit(&outer), "outer span exit");
  agora_unlock(lock);
  check_ranges(outer,
               {{(uintptr_t)(mine + off), 15},
                {(uintptr_t)(mine + off + 16), 16},
                {(uintptr_t)(mine + page + 512), 800},
                {(uintptr_t)(mine + 2 * page + 100), 4}},
               base, "outer span");
  check(agora::store_trace_depth() == 0 && agora::store_trace_pending() == 0, "spans closed");

  // The conversion the engines use: the 16-byte store splits at the page end.
  std::vector<agora::StoreRange> pages;
  check(agora::store_ranges_to_pages(outer, base, page, &pages), "store_ranges_to_pages");
  size_t p0 = (size_t)me * 3;
  bool split_ok = pages.size() == 5 && pages[0].page == p0 && pages[0].offset == off && pages[0].length == 15 &&
                  pages[1].page == p0 && pages[1].offset == off + 16 && pages[1].length == 8 &&
                  pages[2].page == p0 + 1 && pages[2].offset == 0 && pages[2].length == 8 && pages[3].page == p0 + 1 &&
                  pages[3].offset == 512 && pages[3].length == 800 && pages[4].page == p0 + 2 &&
                  pages[4].offset == 100 && pages[4].length == 4;
  check(split_ok, "page split of the recorded ranges");

  // Every rank sees every other's stores (the program runs correctly traced).
  agora_barrier();
  for (int r = 0; r < n; ++r) {
    uint8_t *theirs = g + (size_t)r * 3 * page;
    bool ok = theirs[off] == v8(r) && *(uint16_t *)(theirs + off + 1) == v16(r) &&
              *(uint32_t *)(theirs + off + 3) == v32(r) && *(uint64_t *)(theirs + off + 7) == v64(r) &&
              *(__int128 *)(theirs + off + 16) == (((__int128)v64(r) << 64) | v32(r)) &&
              *(uint32_t *)(theirs + 2 * page + 100) == v32(r);
    for (int i = 0; i < 100; ++i) ok = ok && ((double *)(theirs + page + 512))[i] == vd(r, i);
    if (!ok) {
      std::fprintf(stderr, "rank %d: FAIL rank %d's values not seen after the barrier\n", me, r);
      ++g_failures;
    }
  }

  // A traced lock counter: each span records exactly the counter's 8 bytes.
  int bad_spans = 0;
  for (int i = 0; i < iterations; ++i) {
    agora_lock(lock);
    agora::store_trace_span_enter();
    *counter += 1;
    std::vector<TracedRange> got;
    agora::store_trace_span_exit(&got);
    agora_unlock(lock);
    if (got != std::vector<TracedRange>{{(uintptr_t)counter, 8}}) ++bad_spans;
  }
  check(bad_spans == 0, "counter spans recorded other than the counter");
  agora_barrier();
  if (*counter != (uint64_t)n * (uint64_t)iterations) {
    std::fprintf(stderr, "rank %d: FAIL counter %llu, expected %llu\n", me, (unsigned long long)*counter,
                 (unsigned long long)n * (unsigned long long)iterations);
    ++g_failures;
  }
  agora_barrier();
  if (g_failures == 0 && me == 0) std::printf("PASS store trace (%d ranks)\n", n);
  agora_finalize();
  return g_failures == 0 ? 0 : 1;
}
