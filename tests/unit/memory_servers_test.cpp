// Homes with memory servers (AddressSpace::set_memory_servers,
// docs/memory-servers.md): on a compute rank every page that has a home is
// homed on a server, striped; pages without one (beyond the collective bump
// pointer, outside any placed run) still have none; on a server every page of
// the range has one.
#include <gtest/gtest.h>

#include "memory/address_space.h"

namespace agora {
namespace {

constexpr uintptr_t kBase = (uintptr_t)1 << 40;
constexpr size_t kPage = 4096;

// 1024 pages on 2 compute ranks: collective [0,256), placed [256,512),
// arenas of 256 pages from 512; servers are ranks 2 and 3, 2-page stripes.
struct Layout {
  AddressSpace as{kBase, 1024 * kPage, kPage, 2};
  explicit Layout(bool on_server) { as.set_memory_servers(2, 2, 2, on_server); }
};
Rank striped(PageId p) { return 2 + (Rank)((p / 2) % 2); }

TEST(MemoryServers, ComputeRankHomesEveryAllocatedPageOnAServerStriped) {
  Layout layout(false);
  AddressSpace &as = layout.as;
  PageId first, count;
  ASSERT_TRUE(as.collective_reserve(10 * kPage, Placement::Cyclic, 0, &first, &count));
  ASSERT_TRUE(as.collective_reserve(6 * kPage, Placement::OnRank, 1, &first, &count));
  for (PageId p = 0; p < 16; ++p) EXPECT_EQ(as.home_of(p), striped(p)) << "page " << p;
  EXPECT_EQ(as.home_of(16), -1);  // beyond the bump pointer: no home
  // Arena pages of either compute rank: on the servers too.
  for (Rank r = 0; r < 2; ++r)
    for (PageId p = as.arena_first_page(r); p < as.arena_first_page(r) + 5; ++p)
      EXPECT_EQ(as.home_of(p), striped(p)) << "arena page " << p;
  EXPECT_EQ(as.arena_owner(as.base() + as.arena_first_page(1) * kPage), 1);  // the owner allocates
  // A placed run: striped while live, no home outside it.
  EXPECT_EQ(as.home_of(300), -1);
  ASSERT_TRUE(as.placed_insert({300, 4, Placement::Block, 0}));
  for (PageId p = 300; p < 304; ++p) EXPECT_EQ(as.home_of(p), striped(p));
  EXPECT_EQ(as.home_of(304), -1);
}

TEST(MemoryServers, ServerSeesEveryPageOfTheRangeHomed) {
  Layout layout(true);  // a server hears of no allocation
  AddressSpace &as = layout.as;
  for (PageId p : {0ull, 1ull, 2ull, 3ull, 255ull, 300ull, 511ull, 512ull, 1023ull})
    EXPECT_EQ(as.home_of(p), striped(p)) << "page " << p;
  EXPECT_EQ(as.home_of(1024), -1);  // beyond the range
}

TEST(MemoryServers, StripesOfOnePageAlternate) {
  AddressSpace as(kBase, 1024 * kPage, kPage, 3);
  as.set_memory_servers(3, 3, 1, true);
  for (PageId p = 0; p < 12; ++p) EXPECT_EQ(as.home_of(p), 3 + (Rank)(p % 3));
}

TEST(MemoryServers, WithoutServersPlacementDecides) {
  AddressSpace as(kBase, 1024 * kPage, kPage, 2);
  PageId first, count;
  ASSERT_TRUE(as.collective_reserve(4 * kPage, Placement::Cyclic, 0, &first, &count));
  for (PageId p = 0; p < 4; ++p) EXPECT_EQ(as.home_of(p), (Rank)(p % 2));
  EXPECT_EQ(as.servers(), 0);
}

}  // namespace
}  // namespace agora
