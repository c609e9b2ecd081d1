// Layout of the global range and the home of every page
// (src/memory/address_space): the four regions and their boundaries,
// home_of for each placement, maybe_allocated, arena owners, collective
// reservation up to UINT64_MAX, and program windows.
#include "memory/address_space.h"
#include "memory/default_range_size.h"

#include <gtest/gtest.h>

namespace agora {
namespace {

constexpr uintptr_t kBase = (uintptr_t)1 << 40;
constexpr size_t kPage = 4096;

struct AddressSpaceTest : ::testing::Test {
  // 1024 pages on 4 ranks: collective [0,256), placed [256,512), arenas of
  // 128 pages from 512.
  AddressSpace as{kBase, 1024 * kPage, kPage, 4};
  uintptr_t addr(PageId p, size_t off = 0) { return kBase + p * kPage + off; }
};

TEST_F(AddressSpaceTest, RegionBoundaries) {
  EXPECT_EQ(as.collective_capacity_pages(), 256u);
  EXPECT_EQ(as.placed_first_page(), 256u);
  EXPECT_EQ(as.placed_capacity_pages(), 256u);
  EXPECT_EQ(as.arena_pages(), 128u);
  for (Rank r = 0; r < 4; ++r) EXPECT_EQ(as.arena_first_page(r), 512u + 128u * r);
  EXPECT_TRUE(as.in_placed_region(256));
  EXPECT_TRUE(as.in_placed_region(511));
  EXPECT_FALSE(as.in_placed_region(255));
  EXPECT_FALSE(as.in_placed_region(512));
  EXPECT_EQ(as.page_of(addr(5, 4095)), 5u);
  EXPECT_EQ(as.addr_of(5), addr(5));
  EXPECT_TRUE(as.contains(kBase));
  EXPECT_TRUE(as.contains(addr(1023, 4095)));
  EXPECT_FALSE(as.contains(addr(1024)));
  EXPECT_FALSE(as.contains(kBase - 1));
}

TEST_F(AddressSpaceTest, ArenasAreHomedOnTheirRank) {
  EXPECT_EQ(as.home_of(512), 0);
  EXPECT_EQ(as.home_of(639), 0);
  EXPECT_EQ(as.home_of(640), 1);
  EXPECT_EQ(as.home_of(1023), 3);
  EXPECT_EQ(as.arena_owner(addr(700)), 1);
  EXPECT_EQ(as.arena_owner(addr(511)), -1);     // placed region
  EXPECT_EQ(as.arena_owner(addr(1024)), -1);    // outside
  EXPECT_TRUE(as.maybe_allocated(addr(1000)));  // decided by the arena's home
}

TEST_F(AddressSpaceTest, CollectiveRunsByPlacement) {
  PageId first, count;
  EXPECT_EQ(as.home_of(0), -1);  // nothing allocated yet
  EXPECT_FALSE(as.maybe_allocated(addr(0)));
  ASSERT_TRUE(as.collective_reserve(8 * kPage, Placement::Block, 0, &first, &count));
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(count, 8u);
  ASSERT_TRUE(as.collective_reserve(4 * kPage + 1, Placement::Cyclic, 0, &first, &count));
  EXPECT_EQ(first, 8u);
  EXPECT_EQ(count, 5u);  // rounded up
  ASSERT_TRUE(as.collective_reserve(0, Placement::OnRank, 2, &first, &count));
  EXPECT_EQ(count, 1u);  // 0 bytes still take a page
  EXPECT_EQ(as.collective_pages_used(), 14u);
  // Block: 8 pages on 4 ranks, two each.
  EXPECT_EQ(as.home_of(0), 0);
  EXPECT_EQ(as.home_of(3), 1);
  EXPECT_EQ(as.home_of(7), 3);
  // Cyclic from page 8.
  EXPECT_EQ(as.home_of(8), 0);
  EXPECT_EQ(as.home_of(9), 1);
  EXPECT_EQ(as.home_of(12), 0);
  EXPECT_EQ(as.home_of(13), 2);   // on rank 2
  EXPECT_EQ(as.home_of(14), -1);  // beyond the bump pointer
  EXPECT_TRUE(as.maybe_allocated(addr(13, 100)));
  EXPECT_FALSE(as.maybe_allocated(addr(14)));
  CollectiveRun r = as.collective_run(8, 5);
  EXPECT_EQ(r.placement, Placement::Cyclic);
  EXPECT_EQ(r.first, 8u);
}

TEST_F(AddressSpaceTest, CollectiveRegionExhaustionAndHugeSizes) {
  PageId first, count;
  EXPECT_FALSE(as.collective_reserve(UINT64_MAX, Placement::Block, 0, &first, &count));
  EXPECT_FALSE(as.collective_reserve(257 * kPage, Placement::Block, 0, &first, &count));
  EXPECT_EQ(as.collective_pages_used(), 0u);  // a failed reservation takes nothing
  ASSERT_TRUE(as.collective_reserve(256 * kPage, Placement::Block, 0, &first, &count));
  EXPECT_FALSE(as.collective_reserve(1, Placement::Block, 0, &first, &count));
  EXPECT_EQ(as.home_of(255), 3);
}

TEST_F(AddressSpaceTest, PlacedRunsComeAndGo) {
  EXPECT_EQ(as.home_of(300), -1);
  EXPECT_FALSE(as.maybe_allocated(addr(300)));
  CollectiveRun r;
  r.first = 300;
  r.count = 4;
  r.placement = Placement::Cyclic;
  ASSERT_TRUE(as.placed_insert(r));
  EXPECT_EQ(as.home_of(300), 0);
  EXPECT_EQ(as.home_of(303), 3);
  EXPECT_EQ(as.home_of(304), -1);
  EXPECT_TRUE(as.maybe_allocated(addr(302)));
  CollectiveRun removed;
  ASSERT_TRUE(as.placed_remove(300, &removed));
  EXPECT_EQ(as.home_of(301), -1);
  EXPECT_FALSE(as.maybe_allocated(addr(301)));
}

TEST_F(AddressSpaceTest, ProgramWindowsFollowTheRange) {
  const uintptr_t data = 0x600000, bss = 0x800000;
  ASSERT_TRUE(as.windows().add(data, 2 * kPage));
  ASSERT_TRUE(as.windows().add(bss, 3 * kPage));
  EXPECT_FALSE(as.windows().add(0x900000, kPage));  // at most two
  EXPECT_EQ(as.page_of(data), 1024u);
  EXPECT_EQ(as.page_of(bss + kPage + 5), 1027u);
  EXPECT_EQ(as.addr_of(1026), bss);
  EXPECT_EQ(as.home_of(1028), ProgramWindows::kHome);
  EXPECT_EQ(as.home_of(1029), -1);  // past the windows
  EXPECT_TRUE(as.contains(data + 2 * kPage - 1));
  EXPECT_FALSE(as.contains(data + 2 * kPage));
  EXPECT_TRUE(as.maybe_allocated(bss));
  EXPECT_EQ(as.arena_owner(bss), -1);
}

TEST(AddressSpace, OneRankOwnsEveryArenaPage) {
  AddressSpace as(kBase, 64 * kPage, kPage, 1);
  EXPECT_EQ(as.arena_pages(), 32u);
  EXPECT_EQ(as.home_of(32), 0);
  EXPECT_EQ(as.home_of(63), 0);
}

TEST(AddressSpace, RanksThatDoNotDivideTheArenaHalf) {
  // 100 pages, 3 ranks: arenas of 16 pages from 50; pages 98 and 99 belong to no arena.
  AddressSpace as(kBase, 100 * kPage, kPage, 3);
  EXPECT_EQ(as.arena_pages(), 16u);
  EXPECT_EQ(as.home_of(50), 0);
  EXPECT_EQ(as.home_of(97), 2);
  EXPECT_EQ(as.home_of(98), -1);
  EXPECT_EQ(as.arena_owner(kBase + 99 * kPage), -1);
}

}  // namespace
}  // namespace agora

// AGORA_MEMORY unset: half of what fits in every rank, a power of two, at
// most 16 TiB; nothing below 1 MiB.
TEST(DefaultRangeSize, HalfOfTheFitAPowerOfTwoCapped) {
  constexpr uint64_t MiB = 1ull << 20, GiB = 1ull << 30, TiB = 1ull << 40;
  EXPECT_EQ(agora::default_range_size(41 * TiB), 16 * TiB);  // no ulimit -v: the cap
  EXPECT_EQ(agora::default_range_size(32 * TiB), 16 * TiB);  // exactly twice the cap
  EXPECT_EQ(agora::default_range_size(32 * TiB - 1), 8 * TiB);
  EXPECT_EQ(agora::default_range_size(31 * GiB + 900 * MiB), 8 * GiB);  // ulimit -v 64G, 200M mapped
  EXPECT_EQ(agora::default_range_size(8 * GiB), 4 * GiB);
  EXPECT_EQ(agora::default_range_size(2 * MiB), 1 * MiB);
  EXPECT_EQ(agora::default_range_size(2 * MiB - 1), 0u);
  EXPECT_EQ(agora::default_range_size(0), 0u);
  EXPECT_EQ(agora::default_range_size(UINT64_MAX), 16 * TiB);
}
