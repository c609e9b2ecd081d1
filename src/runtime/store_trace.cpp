// Store tracing (store_trace.h): clang's __sanitizer_cov_store* callbacks and
// the per-thread record of the stores made to global memory inside spans.
#include "runtime/store_trace.h"

#include <algorithm>
#include <atomic>

#include "memory/address_space.h"

namespace agora {
namespace {

// Depth of the spans this thread has open. Trivial and initial-exec so that
// the fast path (depth 0) is one %fs-relative load, also in libagora.so.
__attribute__((tls_model("initial-exec"))) thread_local uint32_t t_depth = 0;

struct ThreadTrace {
  std::vector<TracedRange> ranges;
  // ranges.size() at each open span's enter; marks.back() is the innermost.
  std::vector<size_t> marks;
  // Compact the innermost span's ranges (sort, merge) when it holds more.
  size_t compact_at = 0;
};
thread_local ThreadTrace t_trace;

constexpr size_t kCompactMin = 1024;

// Global memory: the range and program mode's windows (set at init, read by
// every thread; relaxed: they are set before the threads that store exist).
std::atomic<uintptr_t> g_lo{0}, g_hi{0};
std::atomic<int> g_windows{0};
std::atomic<uintptr_t> g_window_lo[kStoreTraceMaxWindows], g_window_hi[kStoreTraceMaxWindows];

std::atomic<bool> g_instrumented{false};

bool in_global(uintptr_t a) {
  if (a - g_lo.load(std::memory_order_relaxed) <
      g_hi.load(std::memory_order_relaxed) - g_lo.load(std::memory_order_relaxed))
    return true;
  int n = g_windows.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (a - g_window_lo[i].load(std::memory_order_relaxed) <
        g_window_hi[i].load(std::memory_order_relaxed) - g_window_lo[i].load(std::memory_order_relaxed))
      return true;
  return false;
}

// Sort [first, end) of v by address and merge ranges that touch or overlap
// (a merged length that would not fit 32 bits starts a new range).
void sort_and_merge(std::vector<TracedRange> *v, size_t first) {
  auto begin = v->begin() + (ptrdiff_t)first;
  std::sort(begin, v->end());
  size_t out = first;
  for (size_t i = first; i < v->size(); ++i) {
    TracedRange r = (*v)[i];
    if (out > first) {
      TracedRange &last = (*v)[out - 1];
      uintptr_t last_end = last.first + last.second;
      uintptr_t end = std::max(last_end, r.first + r.second);
      if (r.first <= last_end && end - last.first <= UINT32_MAX) {
        last.second = (uint32_t)(end - last.first);
        continue;
      }
    }
    (*v)[out++] = r;
  }
  v->resize(out);
}

void append(uintptr_t a, uint32_t size) {
  ThreadTrace &t = t_trace;
  size_t mark = t.marks.empty() ? 0 : t.marks.back();
  if (t.ranges.size() > mark) {
    // Coalesce with the previous store when they touch or overlap (the common
    // case: a loop writing consecutive elements), never across the
    // innermost span's mark (its exit hands out only its own stores).
    TracedRange &last = t.ranges.back();
    uintptr_t last_end = last.first + last.second;
    if (a <= last_end && a + size >= last.first) {
      uintptr_t lo = std::min(last.first, a), hi = std::max(last_end, a + size);
      if (hi - lo <= UINT32_MAX) {
        last = {lo, (uint32_t)(hi - lo)};
        return;
      }
    }
  }
  t.ranges.emplace_back(a, size);
  if (t.ranges.size() - mark >= std::max(t.compact_at, kCompactMin)) {
    // Scattered stores: keep the list as long as the distinct bytes stored,
    // not as the number of stores.
    sort_and_merge(&t.ranges, mark);
    t.compact_at = 2 * (t.ranges.size() - mark);
  }
}

inline void on_store(const void *addr, uint32_t size) {
  if (__builtin_expect(t_depth == 0, 1)) return;
  uintptr_t a = (uintptr_t)addr;
  if (!in_global(a)) return;
  append(a, size);
}

}  // namespace

void store_trace_set_global_range(uintptr_t lo, uintptr_t hi) {
  g_lo.store(lo, std::memory_order_relaxed);
  g_hi.store(hi > lo ? hi : lo, std::memory_order_relaxed);
}

bool store_trace_add_window(uintptr_t lo, uintptr_t hi) {
  int n = g_windows.load(std::memory_order_relaxed);
  if (n == kStoreTraceMaxWindows || lo >= hi) return false;
  g_window_lo[n].store(lo, std::memory_order_relaxed);
  g_window_hi[n].store(hi, std::memory_order_relaxed);
  g_windows.store(n + 1, std::memory_order_release);
  return true;
}

void store_trace_reset_ranges() {
  g_windows.store(0, std::memory_order_relaxed);
  g_lo.store(0, std::memory_order_relaxed);
  g_hi.store(0, std::memory_order_relaxed);
}

void store_trace_set_global_memory(const AddressSpace &space) {
  store_trace_reset_ranges();
  store_trace_set_global_range(space.base(), space.base() + space.size());
  const ProgramWindows &w = space.windows();
  for (int i = 0; i < w.count(); ++i) store_trace_add_window(w.addr(i), w.addr(i) + w.bytes(i));
}

void store_trace_span_enter() {
  ThreadTrace &t = t_trace;
  t.marks.push_back(t.ranges.size());
  t.compact_at = kCompactMin;
  ++t_depth;
}

bool store_trace_span_exit(std::vector<TracedRange> *out) {
  if (out) out->clear();
  if (t_depth == 0) return false;
  ThreadTrace &t = t_trace;
  size_t mark = t.marks.back();
  t.marks.pop_back();
  --t_depth;
  if (out) {
    out->assign(t.ranges.begin() + (ptrdiff_t)mark, t.ranges.end());
    sort_and_merge(out, 0);
  }
  if (t_depth == 0) {
    t.ranges.clear();
  } else {
    // The enclosing span keeps these stores; it may coalesce with them now.
    size_t outer = t.marks.back();
    t.compact_at = std::max(kCompactMin, 2 * (t.ranges.size() - outer));
  }
  return true;
}

uint32_t store_trace_depth() { return t_depth; }

bool store_trace_active() { return g_instrumented.load(std::memory_order_relaxed); }

void store_trace_record(const void *addr, uint32_t size) { on_store(addr, size); }

size_t store_trace_pending() { return t_trace.ranges.size(); }

bool store_ranges_to_pages(const std::vector<TracedRange> &in, size_t page_size,
                           const std::function<PageId(uintptr_t)> &page_of, std::vector<StoreRange> *out) {
  if (page_size == 0) return false;
  for (const TracedRange &r : in)
    if (r.first + r.second < r.first) return false;
  for (const TracedRange &r : in) {
    uintptr_t a = r.first, end = r.first + r.second;
    while (a < end) {
      uint32_t offset = (uint32_t)(a % page_size);
      uintptr_t piece = std::min<uintptr_t>(end - a, page_size - offset);
      out->push_back({page_of(a), offset, (uint32_t)piece});
      a += piece;
    }
  }
  return true;
}

bool store_ranges_to_pages(const std::vector<TracedRange> &in, uintptr_t base, size_t page_size,
                           std::vector<StoreRange> *out) {
  if (page_size == 0) return false;
  return store_ranges_to_pages(
      in, page_size, [base, page_size](uintptr_t a) { return (PageId)((a - base) / page_size); }, out);
}

}  // namespace agora

// ---- the instrumentation's callbacks -------------------------------------------
// clang -fsanitize-coverage=func,trace-stores calls one of these before every
// store of 1, 2, 4, 8 or 16 bytes (other sizes, memcpy/memset and atomic
// read-modify-writes are not traced: docs/store-tracing.md). Defined here,
// exported from libagora.so (cmake/agora_export_map.cmake).
extern "C" {
void __sanitizer_cov_store1(uint8_t *addr) { agora::on_store(addr, 1); }
void __sanitizer_cov_store2(uint16_t *addr) { agora::on_store(addr, 2); }
void __sanitizer_cov_store4(uint32_t *addr) { agora::on_store(addr, 4); }
void __sanitizer_cov_store8(uint64_t *addr) { agora::on_store(addr, 8); }
void __sanitizer_cov_store16(__int128 *addr) { agora::on_store(addr, 16); }

// The coverage level clang needs beside trace-stores is `func` (with no
// level, trace-stores emits nothing); it inserts nothing else. The
// documented companions (trace-pc-guard, inline-8bit-counters,
// inline-bool-flag) would also call these at start-up (and trace-pc-guard
// one per edge): cheap no-ops, weak so that a fuzzer's runtime wins.
__attribute__((weak)) void __sanitizer_cov_trace_pc_guard_init(uint32_t *, uint32_t *) {}
__attribute__((weak)) void __sanitizer_cov_trace_pc_guard(uint32_t *) {}
__attribute__((weak)) void __sanitizer_cov_8bit_counters_init(char *, char *) {}
__attribute__((weak)) void __sanitizer_cov_bool_flag_init(char *, char *) {}
__attribute__((weak)) void __sanitizer_cov_pcs_init(const uintptr_t *, const uintptr_t *) {}

void agora_store_trace_mark_instrumented(void) { agora::g_instrumented.store(true, std::memory_order_relaxed); }
}
