// Store tracing's recording (store_trace.h): what is recorded inside and
// outside spans, coalescing, nesting, compaction, and the split into pages.
// The callbacks are driven directly (store_trace_record, and the
// __sanitizer_cov_store* functions themselves), without instrumentation.
#include "runtime/store_trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>

extern "C" void __sanitizer_cov_store4(uint32_t *addr);
extern "C" void __sanitizer_cov_store16(__int128 *addr);

namespace agora {
namespace {

constexpr size_t kPage = 4096;

class StoreTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_.assign(16 * kPage + kPage, 0);
    // page-aligned "global range" inside the vector
    base_ = ((uintptr_t)mem_.data() + kPage - 1) / kPage * kPage;
    store_trace_set_global_range(base_, base_ + 16 * kPage);
  }
  void TearDown() override {
    while (store_trace_depth() > 0) store_trace_span_exit(nullptr);
    store_trace_reset_ranges();
  }
  char *at(size_t off) { return (char *)(base_ + off); }
  TracedRange r(size_t off, uint32_t len) { return {base_ + off, len}; }

  std::vector<char> mem_;
  uintptr_t base_ = 0;
};

TEST_F(StoreTrace, NothingOutsideSpans) {
  store_trace_record(at(0), 4);
  EXPECT_EQ(store_trace_pending(), 0u);
  store_trace_span_enter();
  store_trace_span_exit(nullptr);
  store_trace_record(at(8), 8);
  EXPECT_EQ(store_trace_pending(), 0u);
}

TEST_F(StoreTrace, OutsideGlobalMemoryIgnored) {
  int private_word = 0;
  store_trace_span_enter();
  store_trace_record(&private_word, 4);
  store_trace_record(at(16 * kPage), 4);      // one past the range
  store_trace_record((char *)base_ - 4, 4);   // just below it
  store_trace_record(at(16 * kPage - 2), 2);  // last bytes: recorded
  std::vector<TracedRange> out;
  ASSERT_TRUE(store_trace_span_exit(&out));
  EXPECT_EQ(out, (std::vector<TracedRange>{r(16 * kPage - 2, 2)}));
}

TEST_F(StoreTrace, CallbacksRecordTheirSize) {
  store_trace_span_enter();
  __sanitizer_cov_store4((uint32_t *)at(100));
  __sanitizer_cov_store16((__int128 *)at(200));
  std::vector<TracedRange> out;
  ASSERT_TRUE(store_trace_span_exit(&out));
  EXPECT_EQ(out, (std::vector<TracedRange>{r(100, 4), r(200, 16)}));
}

TEST_F(StoreTrace, CoalescesAdjacentAndOverlapping) {
  store_trace_span_enter();
  for (int i = 0; i < 100; ++i) store_trace_record(at(64 + 4 * i), 4);    // ascending
  for (int i = 99; i >= 0; --i) store_trace_record(at(1024 + 8 * i), 8);  // descending
  store_trace_record(at(1020), 8);                                        // overlaps the second run's start
  store_trace_record(at(64), 1);                                          // inside the first run, out of order
  EXPECT_EQ(store_trace_pending(), 3u);
  std::vector<TracedRange> out;
  ASSERT_TRUE(store_trace_span_exit(&out));
  // sorted, disjoint, merged: [64, 464) and [1020, 1824)
  EXPECT_EQ(out, (std::vector<TracedRange>{r(64, 400), r(1020, 804)}));
  EXPECT_EQ(store_trace_pending(), 0u);
}

TEST_F(StoreTrace, DisjointStaySeparate) {
  store_trace_span_enter();
  store_trace_record(at(0), 4);
  store_trace_record(at(5), 1);  // a 1-byte gap
  std::vector<TracedRange> out;
  ASSERT_TRUE(store_trace_span_exit(&out));
  EXPECT_EQ(out, (std::vector<TracedRange>{r(0, 4), r(5, 1)}));
}

TEST_F(StoreTrace, NestedSpansEachGetTheirOwnStores) {
  store_trace_span_enter();  // outer
  store_trace_record(at(0), 4);
  store_trace_span_enter();      // inner
  store_trace_record(at(4), 4);  // adjacent to the outer's store: not merged into it
  store_trace_record(at(100), 2);
  EXPECT_EQ(store_trace_depth(), 2u);
  std::vector<TracedRange> inner, outer;
  ASSERT_TRUE(store_trace_span_exit(&inner));
  EXPECT_EQ(inner, (std::vector<TracedRange>{r(4, 4), r(100, 2)}));
  store_trace_record(at(8), 4);
  ASSERT_TRUE(store_trace_span_exit(&outer));
  EXPECT_EQ(outer, (std::vector<TracedRange>{r(0, 12), r(100, 2)}));
  EXPECT_EQ(store_trace_depth(), 0u);
  EXPECT_EQ(store_trace_pending(), 0u);
}

TEST_F(StoreTrace, ExitWithoutEnterIsRefused) {
  std::vector<TracedRange> out{r(0, 1)};
  EXPECT_FALSE(store_trace_span_exit(&out));
  EXPECT_TRUE(out.empty());
}

TEST_F(StoreTrace, ThreadsRecordApart) {
  store_trace_span_enter();
  store_trace_record(at(0), 8);
  std::vector<TracedRange> other;
  std::thread t([&] {
    store_trace_record(at(64), 8);  // this thread has no span open
    store_trace_span_enter();
    store_trace_record(at(128), 8);
    store_trace_span_exit(&other);
  });
  t.join();
  EXPECT_EQ(other, (std::vector<TracedRange>{r(128, 8)}));
  std::vector<TracedRange> out;
  ASSERT_TRUE(store_trace_span_exit(&out));
  EXPECT_EQ(out, (std::vector<TracedRange>{r(0, 8)}));
}

// Scattered stores are compacted as they come: the list stays as long as the
// distinct ranges stored, and the result is exactly the union of the stores.
TEST_F(StoreTrace, ScatteredStoresCompactToTheirUnion) {
  std::mt19937 rng(7);
  std::vector<bool> stored(16 * kPage, false);
  store_trace_span_enter();
  for (int i = 0; i < 200000; ++i) {
    size_t size = size_t(1) << (rng() % 5);  // 1..16
    size_t off = (rng() % (16 * kPage / 64)) * 64 + (rng() % 4) * size;
    if (off + size > 16 * kPage) continue;
    store_trace_record(at(off), (uint32_t)size);
    std::fill(stored.begin() + (ptrdiff_t)off, stored.begin() + (ptrdiff_t)(off + size), true);
  }
  EXPECT_LE(store_trace_pending(), 2 * 16 * kPage / 64 + 1024);
  std::vector<TracedRange> out;
  ASSERT_TRUE(store_trace_span_exit(&out));
  std::vector<bool> got(16 * kPage, false);
  for (size_t i = 0; i < out.size(); ++i) {
    if (i) {
      EXPECT_LT(out[i - 1].first + out[i - 1].second, out[i].first);  // disjoint, not touching
    }
    for (uint32_t b = 0; b < out[i].second; ++b) got[out[i].first - base_ + b] = true;
  }
  EXPECT_EQ(got, stored);
}

TEST(StoreRangesToPages, SplitsAtPageBoundaries) {
  uintptr_t base = 0x100000000;
  std::vector<TracedRange> in{{base + 10, 20},
                              {base + kPage - 3, 8},               // crosses 0|1
                              {base + 2 * kPage, 2 * kPage},       // pages 2 and 3 whole
                              {base + 5 * kPage - 1, kPage + 2}};  // 4, 5 whole, 6
  std::vector<StoreRange> out;
  ASSERT_TRUE(store_ranges_to_pages(in, base, kPage, &out));
  std::vector<std::tuple<PageId, uint32_t, uint32_t>> got;
  for (auto &s : out) got.emplace_back(s.page, s.offset, s.length);
  EXPECT_EQ(got, (std::vector<std::tuple<PageId, uint32_t, uint32_t>>{{0, 10, 20},
                                                                      {0, kPage - 3, 3},
                                                                      {1, 0, 5},
                                                                      {2, 0, kPage},
                                                                      {3, 0, kPage},
                                                                      {4, kPage - 1, 1},
                                                                      {5, 0, kPage},
                                                                      {6, 0, 1}}));
}

TEST(StoreRangesToPages, CustomPageMapAndBadInput) {
  // a window mapped after the range's pages, as program mode does
  uintptr_t window = 0x600000;
  std::vector<TracedRange> in{{window + kPage + 8, 4}};
  std::vector<StoreRange> out;
  ASSERT_TRUE(store_ranges_to_pages(
      in, kPage, [&](uintptr_t a) { return 1000 + (a - window) / kPage; }, &out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].page, 1001u);
  EXPECT_EQ(out[0].offset, 8u);
  EXPECT_EQ(out[0].length, 4u);

  out.clear();
  EXPECT_FALSE(store_ranges_to_pages(in, window, 0, &out));
  EXPECT_FALSE(store_ranges_to_pages({{UINTPTR_MAX - 2, 8}}, 0, kPage, &out));
  EXPECT_TRUE(out.empty());
}

TEST(StoreTraceActive, OffUntilMarked) {
  // The unit test binary is not instrumented and does not include the mark.
  EXPECT_FALSE(store_trace_active());
  agora_store_trace_mark_instrumented();
  EXPECT_TRUE(store_trace_active());
}

}  // namespace
}  // namespace agora
