// The collective allocations (src/memory/collective_runs): each placement's
// home of every page and the pages a rank homes, agreeing with each other,
// including runs too large for 64-bit products; lookups across segments.
#include "memory/collective_runs.h"

#include <gtest/gtest.h>

#include <map>

namespace agora {
namespace {

CollectiveRun run(PageId first, PageId count, Placement p, Rank rank = 0) {
  CollectiveRun r;
  r.first = first;
  r.count = count;
  r.placement = p;
  r.rank = rank;
  return r;
}

// home() and for_each_run_home_pages() describe the same partition.
void expect_partition(const CollectiveRun &r, Rank n) {
  std::map<PageId, Rank> owner;
  for (Rank who = 0; who < n; ++who)
    for_each_run_home_pages(r, who, n, [&](PageId first, PageId count) {
      for (PageId p = first; p < first + count; ++p) {
        ASSERT_FALSE(owner.count(p)) << "page " << p << " homed twice";
        owner[p] = who;
      }
    });
  ASSERT_EQ(owner.size(), r.count);
  for (auto &[p, who] : owner) ASSERT_EQ(r.home(p, n), who) << "page " << p << " of " << r.count << " on " << n;
}

TEST(CollectiveRun, BlockPlacementIsContiguousAndBalanced) {
  CollectiveRun r = run(100, 10, Placement::Block);
  // 10 pages on 4 ranks: ceil splits 3, 2, 3, 2.
  std::vector<Rank> homes;
  for (PageId p = 100; p < 110; ++p) homes.push_back(r.home(p, 4));
  EXPECT_EQ(homes, (std::vector<Rank>{0, 0, 0, 1, 1, 2, 2, 2, 3, 3}));
  for (Rank n : {1, 2, 3, 4, 7, 16})
    for (PageId count : {1, 2, 3, 5, 16, 17, 100}) expect_partition(run(7, count, Placement::Block), n);
}

TEST(CollectiveRun, FewerPagesThanRanks) {
  CollectiveRun r = run(0, 2, Placement::Block);
  EXPECT_EQ(r.home(0, 5), 0);
  EXPECT_EQ(r.home(1, 5), 2);
  int stretches = 0;
  for_each_run_home_pages(r, 1, 5, [&](PageId, PageId) { ++stretches; });
  EXPECT_EQ(stretches, 0);  // rank 1 homes nothing
}

TEST(CollectiveRun, CyclicAndOnRank) {
  for (Rank n : {1, 2, 3, 5}) {
    expect_partition(run(3, 11, Placement::Cyclic), n);
    expect_partition(run(3, 11, Placement::OnRank, n - 1), n);
  }
  CollectiveRun c = run(10, 6, Placement::Cyclic);
  EXPECT_EQ(c.home(10, 4), 0);
  EXPECT_EQ(c.home(13, 4), 3);
  EXPECT_EQ(c.home(14, 4), 0);
  CollectiveRun o = run(10, 6, Placement::OnRank, 2);
  EXPECT_EQ(o.home(15, 4), 2);
}

TEST(CollectiveRun, HugeBlockRunsDoNotOverflow) {
  // 2^40 pages on 1000 ranks: i * nranks passes 2^64 without 128-bit math.
  CollectiveRun r = run(0, (PageId)1 << 40, Placement::Block);
  EXPECT_EQ(r.home(0, 1000), 0);
  EXPECT_EQ(r.home(((PageId)1 << 40) - 1, 1000), 999);
  EXPECT_EQ(r.home((PageId)1 << 39, 1000), 500);
  PageId lo = 0, hi = 0;
  for_each_run_home_pages(r, 999, 1000, [&](PageId f, PageId c) { lo = f, hi = f + c; });
  EXPECT_EQ(hi, (PageId)1 << 40);
  EXPECT_EQ(r.home(lo, 1000), 999);
  EXPECT_EQ(r.home(lo - 1, 1000), 998);
}

TEST(CollectiveRuns, AppendAndFindAcrossSegments) {
  CollectiveRuns runs;
  EXPECT_EQ(runs.size(), 0u);
  // 1000 runs of 1..3 pages cross the first segments (64, 128, 256, ...).
  PageId next = 0;
  std::vector<PageId> starts;
  for (int i = 0; i < 1000; ++i) {
    PageId count = 1 + i % 3;
    ASSERT_TRUE(runs.append(run(next, count, (Placement)(i % 3), i % 4)));
    starts.push_back(next);
    next += count;
  }
  EXPECT_EQ(runs.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    const CollectiveRun &r = runs.find(starts[i]);
    ASSERT_EQ(r.first, starts[i]);
    ASSERT_EQ(r.placement, (Placement)(i % 3));
    const CollectiveRun &last = runs.find(starts[i] + r.count - 1);
    ASSERT_EQ(last.first, starts[i]);  // the run's last page
  }
}

}  // namespace
}  // namespace agora
