// Store tracing: the stores a thread makes to global memory inside a span
// (a critical section), found by clang's -fsanitize-coverage=trace-stores
// instrumentation (Samhita/RegC's fine-grain regc finds them by instrumenting
// every store). The instrumented program calls __sanitizer_cov_storeN(addr)
// before every store; this file defines those callbacks and keeps, per
// thread, the byte ranges stored to global memory while a span is open.
// docs/store-tracing.md has the build side (agoracc -agora-trace-stores).
//
// Cost: a store made outside any span costs a call, one thread-local load
// and a predictable branch; inside a span, a store outside global memory
// adds a range check against globals set at init; otherwise the range is
// appended to the thread's list, coalesced with the previous one when they
// touch or overlap.
//
// Nested spans: ranges are recorded while the depth is > 0, and every exit
// hands out the stores made since *its own* enter (an inner span's stores
// are also its enclosing span's: they stay recorded until the outermost
// exit, which hands out everything and clears the list).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "protocol/engine.h"

namespace agora {

using TracedRange = std::pair<uintptr_t, uint32_t>;  // (address, bytes)

// ---- set up by the runtime at init --------------------------------------------
// The global range [lo, hi): stores there are recorded. Program mode adds its
// windows (the executable's .data/.bss) with store_trace_add_window (at most
// kStoreTraceMaxWindows; false if full or lo >= hi).
constexpr int kStoreTraceMaxWindows = 2;
void store_trace_set_global_range(uintptr_t lo, uintptr_t hi);
bool store_trace_add_window(uintptr_t lo, uintptr_t hi);
void store_trace_reset_ranges();  // no global memory: nothing is recorded
// All of the above from the runtime's address space (range and windows).
class AddressSpace;
void store_trace_set_global_memory(const AddressSpace &space);

// ---- spans, for the runtime (called by the thread that holds the lock) --------
// The thread acquired a lock: depth++.
void store_trace_span_enter();
// depth--; *out (if not null) receives the stores made since the matching
// enter: sorted by address, disjoint, touching ranges merged (their union is
// exactly the bytes stored). The outermost exit also clears the list. Returns false (and leaves *out empty) if no span
// was open on this thread: a misuse, reported by the caller.
bool store_trace_span_exit(std::vector<TracedRange> *out);
// The current thread's span depth.
uint32_t store_trace_depth();
// True iff the program was built with store tracing (agoracc
// -agora-trace-stores / agora_add_traced_executable include
// agora/store_trace_mark.h, whose constructor calls
// agora_store_trace_mark_instrumented() before main). Stable for the whole
// run, so an engine can choose at span_begin between trusting the traced
// stores and write-protecting.
bool store_trace_active();

// ---- conversion for the engines -----------------------------------------------
// Traced ranges -> (page, offset, length), a range crossing page boundaries
// split at each one. Pages are page_size-aligned in the address space
// (the global range's base and the program windows are page aligned);
// page_of maps an address to its page id. Returns false (out unchanged) if
// page_size is 0 or a range wraps the address space.
bool store_ranges_to_pages(const std::vector<TracedRange> &in, size_t page_size,
                           const std::function<PageId(uintptr_t)> &page_of, std::vector<StoreRange> *out);
// The same for the global range alone: page = (addr - base) / page_size.
bool store_ranges_to_pages(const std::vector<TracedRange> &in, uintptr_t base, size_t page_size,
                           std::vector<StoreRange> *out);

// ---- tests ---------------------------------------------------------------------
// Record (addr, size) as the callbacks do (unit tests drive it without
// instrumentation).
void store_trace_record(const void *addr, uint32_t size);
// Number of ranges the current thread holds (open spans' stores).
size_t store_trace_pending();

}  // namespace agora

extern "C" {
// Called by the startup constructor of agora/store_trace_mark.h.
void agora_store_trace_mark_instrumented(void);
}
