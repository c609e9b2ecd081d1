// The live placed allocations (src/memory/placed_runs): insert, remove,
// lookups at run boundaries, overlap refused; lookups from other threads
// while runs come and go.
#include "memory/placed_runs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace agora {
namespace {

CollectiveRun run(PageId first, PageId count, Placement p = Placement::Block, Rank rank = 0) {
  CollectiveRun r;
  r.first = first;
  r.count = count;
  r.placement = p;
  r.rank = rank;
  return r;
}

TEST(PlacedRuns, FindAtBoundaries) {
  PlacedRuns runs;
  CollectiveRun out;
  EXPECT_FALSE(runs.find(0, &out));
  ASSERT_TRUE(runs.insert(run(10, 5, Placement::OnRank, 3)));
  ASSERT_TRUE(runs.insert(run(20, 1)));
  ASSERT_TRUE(runs.insert(run(0, 2)));  // before the others: kept sorted
  EXPECT_FALSE(runs.find(9, &out));
  ASSERT_TRUE(runs.find(10, &out));
  EXPECT_EQ(out.rank, 3);
  ASSERT_TRUE(runs.find(14, &out));
  EXPECT_EQ(out.first, 10u);
  EXPECT_FALSE(runs.find(15, &out));
  EXPECT_TRUE(runs.find(20, &out));
  EXPECT_FALSE(runs.find(21, &out));
  EXPECT_TRUE(runs.find(1, &out));
  EXPECT_FALSE(runs.find(2, &out));
}

TEST(PlacedRuns, OverlapsAndBadRemovesAreRefused) {
  PlacedRuns runs;
  ASSERT_TRUE(runs.insert(run(10, 5)));
  EXPECT_FALSE(runs.insert(run(14, 1)));  // last page
  EXPECT_FALSE(runs.insert(run(5, 6)));   // reaches the first page
  EXPECT_FALSE(runs.insert(run(10, 5)));
  EXPECT_TRUE(runs.insert(run(15, 1)));  // right after
  EXPECT_TRUE(runs.insert(run(9, 1)));   // right before
  CollectiveRun removed;
  EXPECT_FALSE(runs.remove(11, &removed));  // not a run's start
  EXPECT_FALSE(runs.remove(100, &removed));
  ASSERT_TRUE(runs.remove(10, &removed));
  EXPECT_EQ(removed.count, 5u);
  EXPECT_FALSE(runs.remove(10, &removed));  // twice
  CollectiveRun out;
  EXPECT_FALSE(runs.find(12, &out));
  EXPECT_TRUE(runs.find(9, &out));
  EXPECT_TRUE(runs.find(15, &out));
}

TEST(PlacedRuns, ReadersSeeWholeSnapshotsWhileWritersChangeThem) {
  PlacedRuns runs;
  ASSERT_TRUE(runs.insert(run(0, 1)));  // always there
  std::atomic<bool> stop{false};
  std::atomic<long> lookups{0};
  std::thread reader([&] {
    CollectiveRun out;
    while (!stop.load()) {
      ASSERT_TRUE(runs.find(0, &out));
      ASSERT_EQ(out.count, 1u);
      if (runs.find(5, &out)) {
        ASSERT_EQ(out.first, 4u);  // present or absent, never torn
      }
      lookups++;
    }
  });
  for (int i = 0; i < 20000 || lookups.load() < 1000; ++i) {
    ASSERT_TRUE(runs.insert(run(4, 3)));
    CollectiveRun removed;
    ASSERT_TRUE(runs.remove(4, &removed));
  }
  stop = true;
  reader.join();
  EXPECT_GT(lookups.load(), 0);
}

}  // namespace
}  // namespace agora
