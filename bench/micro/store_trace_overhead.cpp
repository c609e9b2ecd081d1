// agora-store-trace-overhead: what store tracing costs an ordinary store
// (Samhita/RegC's admitted cost of instrumenting every store). Built twice with
// clang from this source: agora-store-trace-overhead-traced
// (-fsanitize-coverage=func,trace-stores) and agora-store-trace-overhead-plain.
// Times loops of 8-byte stores, in ns per store (median of --reps runs):
//   private_outside  to private memory, no span open
//   global_outside   to global memory, no span open
//   private_inside   to private memory inside a span (range check, dropped)
//   global_inside    to global memory inside a span, consecutive (recorded,
//                    coalesced into one range)
//   global_scattered to global memory inside a span, every 64th byte
//                    (recorded, one range each, compacted)
//
//   agorarun -n 1 build/bin/agora-store-trace-overhead-traced [--json FILE] [--reps N]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agora/agora.h"
#include "runtime/store_trace.h"

namespace {

constexpr size_t kWords = 4096;  // 32 KiB: stays in L1/L2, so the stores themselves are cheap
constexpr size_t kPasses = 64;

// One 8-byte store per iteration: no vectorization, no unrolling, so that a
// traced build makes exactly one callback per store.
__attribute__((noinline)) void store_loop(uint64_t *p, size_t words, size_t stride, size_t passes) {
  for (size_t pass = 0; pass < passes; ++pass) {
#pragma clang loop vectorize(disable) unroll(disable)
    for (size_t i = 0; i < words; i += stride) p[i] = pass + i;
    asm volatile("" ::"r"(p) : "memory");
  }
}

double ns_per_store(uint64_t *p, size_t stride, bool in_span, int reps) {
  std::vector<double> ns;
  size_t stores = (kWords / stride) * kPasses;
  std::vector<agora::TracedRange> out;
  for (int r = 0; r < reps; ++r) {
    if (in_span) agora::store_trace_span_enter();
    double t0 = agora_wtime();
    store_loop(p, kWords, stride, kPasses);
    double t = agora_wtime() - t0;
    if (in_span) agora::store_trace_span_exit(&out);
    ns.push_back(t * 1e9 / (double)stores);
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  const char *json = nullptr;
  int reps = 21;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) {
      json = argv[++i];
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--json FILE] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1) {
    std::fprintf(stderr, "--reps must be at least 1\n");
    return 2;
  }
  if (agora_init(&argc, &argv) != AGORA_OK) return 1;
  std::vector<uint64_t> priv(kWords);
  void *memory = nullptr;
  agora_status_t status = agora_mem_alloc(kWords * sizeof(uint64_t), &memory);
  auto *global = (uint64_t *)memory;
  if (status != AGORA_OK) {
    std::fprintf(stderr, "agora_mem_alloc failed: %s\n", agora_strerror(status));
    return 1;
  }
  store_loop(global, kWords, 1, 1);  // fault the pages in before timing
  struct Row {
    const char *key;
    double ns;
  } rows[] = {
      {"private_outside", ns_per_store(priv.data(), 1, false, reps)},
      {"global_outside", ns_per_store(global, 1, false, reps)},
      {"private_inside", ns_per_store(priv.data(), 1, true, reps)},
      {"global_inside", ns_per_store(global, 1, true, reps)},
      {"global_scattered", ns_per_store(global, 8, true, reps)},
  };
  std::string text = "{\n  \"benchmark\": \"store_trace_overhead\",\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "  \"instrumented\": %s,\n  \"reps\": %d,\n  \"unit\": \"ns/store\",\n",
                agora::store_trace_active() ? "true" : "false", reps);
  text += buf;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
    std::snprintf(buf, sizeof buf, "  \"%s\": %.3f%s\n", rows[i].key, rows[i].ns,
                  i + 1 < sizeof rows / sizeof rows[0] ? "," : "");
    text += buf;
  }
  text += "}\n";
  if (agora_rank() == 0) {
    std::fputs(text.c_str(), stdout);
    if (json) {
      FILE *f = std::fopen(json, "w");
      if (!f || std::fputs(text.c_str(), f) < 0 || std::fclose(f) != 0) {
        std::fprintf(stderr, "cannot write %s\n", json);
        return 1;
      }
    }
  }
  agora_finalize();
  return 0;
}
