// A rank's agora_malloc heap (src/memory/arena_allocator): first fit,
// alignment, coalescing, exhaustion, sizes up to UINT64_MAX, bad frees,
// page liveness; and the free-list check (free_list_checks.h) on corrupted
// lists.
#include "memory/arena_allocator.h"

#include <gtest/gtest.h>

#include <random>

#include "memory/free_list_checks.h"

namespace agora {
namespace {

constexpr uint64_t kBase = 1 << 20, kPage = 4096;

TEST(ArenaAllocator, FirstFitAlignedBlocks) {
  ArenaAllocator a(kBase, 16 * kPage, kPage);
  uint64_t x = a.allocate(1), y = a.allocate(65), z = a.allocate(0);
  EXPECT_EQ(x, kBase);
  EXPECT_EQ(y, kBase + 64);        // 1 byte takes one 64-byte unit
  EXPECT_EQ(z, kBase + 64 + 128);  // 65 bytes take two; 0 bytes still one unit
  for (uint64_t off : {x, y, z}) EXPECT_EQ(off % ArenaAllocator::kAlign, 0u);
  EXPECT_EQ(a.bytes_free(), 16 * kPage - 64 * 4);
  // First fit: a freed hole at the start is reused by a block that fits.
  EXPECT_EQ(a.release(x), ArenaAllocator::FreeResult::Ok);
  EXPECT_EQ(a.allocate(64), kBase);
  // One that does not fit goes after the others.
  EXPECT_EQ(a.release(kBase), ArenaAllocator::FreeResult::Ok);
  EXPECT_EQ(a.allocate(128), kBase + 256);
}

TEST(ArenaAllocator, CoalescesWithBothNeighbours) {
  ArenaAllocator a(kBase, 4 * kPage, kPage);
  uint64_t b[4];
  for (auto &x : b) x = a.allocate(kPage);
  EXPECT_EQ(a.allocate(1), UINT64_MAX);  // full
  EXPECT_EQ(a.release(b[0]), ArenaAllocator::FreeResult::Ok);
  EXPECT_EQ(a.release(b[2]), ArenaAllocator::FreeResult::Ok);
  EXPECT_EQ(a.allocate(2 * kPage), UINT64_MAX);                // two holes of one page: no run of two
  EXPECT_EQ(a.release(b[1]), ArenaAllocator::FreeResult::Ok);  // joins both
  EXPECT_EQ(a.allocate(3 * kPage), kBase);
  EXPECT_EQ(a.release(kBase), ArenaAllocator::FreeResult::Ok);
  EXPECT_EQ(a.release(b[3]), ArenaAllocator::FreeResult::Ok);
  EXPECT_EQ(a.bytes_free(), 4 * kPage);
  EXPECT_EQ(a.allocate(4 * kPage), kBase);  // one run again
}

TEST(ArenaAllocator, ExhaustionAndHugeSizesFailCleanly) {
  ArenaAllocator a(kBase, 2 * kPage, kPage);
  EXPECT_EQ(a.allocate(2 * kPage + 1), UINT64_MAX);
  EXPECT_EQ(a.allocate(UINT64_MAX), UINT64_MAX);  // no wrap in the round-up
  EXPECT_EQ(a.allocate(UINT64_MAX - 62), UINT64_MAX);
  EXPECT_EQ(a.allocate((uint64_t)1 << 63), UINT64_MAX);
  EXPECT_EQ(a.bytes_free(), 2 * kPage);
  EXPECT_EQ(a.allocate(2 * kPage), kBase);  // all of it still there
  EXPECT_EQ(a.allocate(1), UINT64_MAX);
}

TEST(ArenaAllocator, BadFreesAreDetected) {
  ArenaAllocator a(kBase, 4 * kPage, kPage);
  uint64_t x = a.allocate(256);
  EXPECT_EQ(a.release(x + 64), ArenaAllocator::FreeResult::InsideBlock);
  EXPECT_EQ(a.release(x + 256), ArenaAllocator::FreeResult::NotAllocated);
  EXPECT_EQ(a.release(0), ArenaAllocator::FreeResult::NotAllocated);
  EXPECT_EQ(a.release(x), ArenaAllocator::FreeResult::Ok);
  EXPECT_EQ(a.release(x), ArenaAllocator::FreeResult::NotAllocated);  // double free
  EXPECT_EQ(a.bytes_free(), 4 * kPage);
}

TEST(ArenaAllocator, PageLiveness) {
  ArenaAllocator a(kBase, 4 * kPage, kPage);
  EXPECT_FALSE(a.page_live(0));
  uint64_t x = a.allocate(kPage + 64);  // pages 0 and 1
  EXPECT_TRUE(a.page_live(0));
  EXPECT_TRUE(a.page_live(1));
  EXPECT_FALSE(a.page_live(2));
  EXPECT_FALSE(a.page_live(4));  // past the arena
  EXPECT_FALSE(a.page_live(UINT64_MAX / kPage));
  a.release(x);
  EXPECT_FALSE(a.page_live(0));
  EXPECT_FALSE(a.page_live(1));
}

TEST(ArenaAllocator, RandomWorkloadKeepsAccountsExact) {
  std::mt19937_64 rng(99);
  ArenaAllocator a(kBase, 64 * kPage, kPage);
  std::map<uint64_t, uint64_t> live;  // offset -> rounded size
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 3) {
      uint64_t size = rng() % 3000;
      uint64_t off = a.allocate(size);
      if (off == UINT64_MAX) continue;
      uint64_t len = std::max<uint64_t>(64, (size + 63) / 64 * 64);
      // Inside the arena and overlapping no live block.
      ASSERT_GE(off, kBase);
      ASSERT_LE(off + len, kBase + 64 * kPage);
      auto next = live.lower_bound(off);
      if (next != live.end()) {
        ASSERT_LE(off + len, next->first);
      }
      if (next != live.begin()) {
        ASSERT_LE(std::prev(next)->first + std::prev(next)->second, off);
      }
      live[off] = len;
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      ASSERT_EQ(a.release(it->first), ArenaAllocator::FreeResult::Ok);
      live.erase(it);
    }
    uint64_t used = 0;
    for (auto &[o, l] : live) used += l;
    ASSERT_EQ(a.bytes_free(), 64 * kPage - used);
  }
}

TEST(FreeListChecks, AcceptConsistentAndRejectCorruptedLists) {
  using Map = std::map<uint64_t, uint64_t>;
  Map free{{0, 64}, {128, 64}}, live{{64, 64}, {192, 64}};
  for (uint64_t at : {0, 64, 128, 192, 255}) EXPECT_TRUE(free_lists_consistent_near(free, live, at, 0ul, 256ul));
  Map touching{{0, 64}, {64, 64}};  // two free runs not coalesced
  EXPECT_FALSE(free_lists_consistent_near(touching, Map{}, 0ul, 0ul, 256ul));
  Map overlap_live{{32, 64}};  // a live block overlapping a free run
  EXPECT_FALSE(free_lists_consistent_near(free, overlap_live, 32ul, 0ul, 256ul));
  Map outside{{250, 64}};  // past the end
  EXPECT_FALSE(free_lists_consistent_near(outside, Map{}, 250ul, 0ul, 256ul));
  Map empty_run{{10, 0}};
  EXPECT_FALSE(free_lists_consistent_near(empty_run, Map{}, 10ul, 0ul, 256ul));
  EXPECT_TRUE(range_outside_runs(free, 64ul, 64ul));
  EXPECT_FALSE(range_outside_runs(free, 60ul, 8ul));
  EXPECT_FALSE(range_outside_runs(free, 100ul, 100ul));
}

}  // namespace
}  // namespace agora
