// Runs of whole pages in the placed region (src/memory/page_run_allocator):
// first fit, retire then release (pages are not free until every rank let
// them go), coalescing, bad frees, exhaustion.
#include "memory/page_run_allocator.h"

#include <gtest/gtest.h>

namespace agora {
namespace {

TEST(PageRunAllocator, FirstFitRetireRelease) {
  PageRunAllocator a(100, 10);
  EXPECT_EQ(a.capacity(), 10u);
  EXPECT_EQ(a.allocate(0), UINT64_MAX);
  PageId x = a.allocate(3), y = a.allocate(2);
  EXPECT_EQ(x, 100u);
  EXPECT_EQ(y, 103u);
  EXPECT_EQ(a.pages_free(), 5u);
  bool inside = true;
  EXPECT_EQ(a.retire(x, &inside), 3u);
  EXPECT_FALSE(inside);
  // Retired but not released: the pages are still out of use.
  EXPECT_EQ(a.pages_free(), 5u);
  EXPECT_EQ(a.allocate(6), UINT64_MAX);
  a.release(x, 3);
  EXPECT_EQ(a.pages_free(), 8u);
  EXPECT_EQ(a.allocate(3), 100u);  // first fit: the hole at the start
}

TEST(PageRunAllocator, RetireOfAnythingButALiveRunStart) {
  PageRunAllocator a(0, 10);
  PageId x = a.allocate(4);
  bool inside = false;
  EXPECT_EQ(a.retire(x + 2, &inside), 0u);
  EXPECT_TRUE(inside);
  EXPECT_EQ(a.retire(x + 4, &inside), 0u);
  EXPECT_FALSE(inside);
  EXPECT_EQ(a.retire(x, &inside), 4u);
  EXPECT_EQ(a.retire(x, &inside), 0u);  // twice
  EXPECT_FALSE(inside);
}

TEST(PageRunAllocator, CoalescesBothWays) {
  PageRunAllocator a(0, 6);
  PageId r[3];
  for (auto &x : r) x = a.allocate(2);
  EXPECT_EQ(a.allocate(1), UINT64_MAX);
  bool inside;
  for (int i : {0, 2, 1}) {
    a.retire(r[i], &inside);
    a.release(r[i], 2);
  }
  EXPECT_EQ(a.pages_free(), 6u);
  EXPECT_EQ(a.allocate(6), 0u);
}

TEST(PageRunAllocator, EmptyAndHugeRequests) {
  PageRunAllocator empty(0, 0);
  EXPECT_EQ(empty.allocate(1), UINT64_MAX);
  PageRunAllocator a(0, 4);
  EXPECT_EQ(a.allocate(UINT64_MAX), UINT64_MAX);
  EXPECT_EQ(a.allocate(5), UINT64_MAX);
  EXPECT_EQ(a.allocate(4), 0u);
}

#ifdef AGORA_CHECKS
TEST(PageRunAllocator, ReleasingTwiceIsCaught) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  PageRunAllocator a(0, 8);
  PageId x = a.allocate(2);
  bool inside;
  a.retire(x, &inside);
  a.release(x, 2);
  EXPECT_DEATH(a.release(x, 2), "internal check failed");
  PageId y = a.allocate(3);
  EXPECT_DEATH(a.release(y, 3), "internal check failed");  // still live: never retired
}
#endif

}  // namespace
}  // namespace agora
