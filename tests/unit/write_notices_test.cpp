// Intervals, write notices and their garbage collection
// (src/protocol/shared/write_notices): bundles carry exactly what the
// receiver lacks, in order; gaps and malformed bundles are refused; GC keeps
// every interval some rank may lack and drops the rest, so storage stays
// bounded; the invariant check fires on corrupted state (AGORA_CHECKS).
#include "protocol/shared/write_notices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <tuple>

namespace agora {

// Reaches into the state to corrupt it (a friend of WriteNotices).
struct WriteNoticesTestAccess {
  static void drop_oldest(WriteNotices &n, Rank creator) { n.by_creator_[creator].pop_front(); }
};

namespace {

using Applied = std::vector<std::tuple<Rank, uint32_t, std::vector<PageId>>>;

Payload view_of(const std::vector<std::byte> &b) { return {b.data(), b.size()}; }

// Hands `to` what `from` has that `to` lacks, as a lock grant would.
bool hand_over(WriteNotices &from, WriteNotices &to, Applied *applied = nullptr) {
  std::vector<std::byte> view, bundle;
  to.encode_view(&view);
  from.encode_bundle(view_of(view), &bundle);
  return to.merge_bundle(view_of(bundle), [&](Rank c, uint32_t i, const PageId *p, size_t n) {
    if (applied) applied->emplace_back(c, i, std::vector<PageId>(p, p + n));
  });
}

TEST(VectorTime, RaiseAppendRead) {
  VectorTime vt;
  vector_time_raise(&vt, 3, 1, 5);
  EXPECT_EQ(vt, (VectorTime{0, 5, 0}));
  vector_time_raise(&vt, 3, 1, 2);  // never backwards
  EXPECT_EQ(vt[1], 5u);
  std::vector<std::byte> wire;
  vector_time_append(VectorTime{}, 3, &wire);  // empty goes as zeros
  vector_time_append(vt, 3, &wire);
  EXPECT_EQ(vector_time_read(wire.data(), 3), (VectorTime{0, 0, 0}));
  EXPECT_EQ(vector_time_read(wire.data() + 12, 3), vt);
}

TEST(WriteNotices, OwnIntervalsAreNumberedFromOne) {
  WriteNotices n(0, 2);
  EXPECT_EQ(n.add_own({1, 2}), 1u);
  EXPECT_EQ(n.add_own({3}), 2u);
  EXPECT_EQ(n.time(), (VectorTime{2, 0}));
  EXPECT_EQ(n.intervals_kept(), 2u);
  EXPECT_TRUE(n.consistent());
}

TEST(WriteNotices, BundleCarriesOnlyWhatTheReceiverLacksInOrder) {
  WriteNotices a(0, 2), b(1, 2);
  a.add_own({10});
  a.add_own({11, 12});
  Applied applied;
  ASSERT_TRUE(hand_over(a, b, &applied));
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_EQ(applied[0], std::make_tuple(0, 1u, std::vector<PageId>{10}));
  EXPECT_EQ(applied[1], std::make_tuple(0, 2u, std::vector<PageId>{11, 12}));
  EXPECT_EQ(b.time(), (VectorTime{2, 0}));
  a.add_own({13});
  applied.clear();
  ASSERT_TRUE(hand_over(a, b, &applied));  // only interval 3 is new to b
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(std::get<1>(applied[0]), 3u);
  applied.clear();
  ASSERT_TRUE(hand_over(a, b, &applied));
  EXPECT_TRUE(applied.empty());
  EXPECT_TRUE(a.consistent() && b.consistent());
}

TEST(WriteNotices, TransitiveIntervalsTravelThroughAThirdRank) {
  WriteNotices a(0, 3), b(1, 3), c(2, 3);
  a.add_own({1});
  ASSERT_TRUE(hand_over(a, b));
  b.add_own({2});
  Applied applied;
  ASSERT_TRUE(hand_over(b, c, &applied));
  ASSERT_EQ(applied.size(), 2u);  // a's interval, then b's
  EXPECT_EQ(std::get<0>(applied[0]), 0);
  EXPECT_EQ(std::get<0>(applied[1]), 1);
  EXPECT_EQ(c.time(), (VectorTime{1, 1, 0}));
}

TEST(WriteNotices, GapsAndMalformedBundlesAreRefused) {
  WriteNotices a(0, 2), b(1, 2);
  a.add_own({1});
  a.add_own({2});
  // A bundle for a receiver claiming to have seen interval 1 of rank 0
  // reaches one that has not: interval 2 alone would leave a gap.
  std::vector<std::byte> view, bundle;
  WriteNotices liar(1, 2);
  WriteNotices helper(0, 2);
  helper.add_own({1});
  ASSERT_TRUE(hand_over(helper, liar));
  liar.encode_view(&view);
  a.encode_bundle(view_of(view), &bundle);
  EXPECT_FALSE(b.merge_bundle(view_of(bundle), [](Rank, uint32_t, const PageId *, size_t) {}));
  // Truncations of a good bundle.
  bundle.clear();
  a.encode_bundle({}, &bundle);
  for (size_t cut = 0; cut + 1 < bundle.size(); cut += 3) {
    WriteNotices fresh(1, 2);
    EXPECT_FALSE(fresh.merge_bundle({bundle.data(), cut}, [](Rank, uint32_t, const PageId *, size_t) {}))
        << "cut at " << cut;
  }
  // A bundle from a job of another size.
  WriteNotices other(0, 3);
  bundle.clear();
  other.encode_bundle({}, &bundle);
  EXPECT_FALSE(b.merge_bundle(view_of(bundle), [](Rank, uint32_t, const PageId *, size_t) {}));
}

TEST(WriteNotices, GarbageCollectionKeepsWhatSomeRankLacks) {
  WriteNotices a(0, 3), b(1, 3);
  for (int i = 0; i < 5; ++i) a.add_own({(PageId)i});
  ASSERT_TRUE(hand_over(a, b));
  // c has seen nothing: a must keep all five.
  EXPECT_EQ(a.intervals_kept(), 5u);
  // Raising everyone's floor to 3 drops intervals 1..3, keeps 4 and 5.
  a.raise_all(VectorTime{3, 0, 0});
  EXPECT_EQ(a.intervals_kept(), 2u);
  EXPECT_TRUE(a.consistent());
  // Rank 2 claims to have seen 1..3: it gets 4 and 5 only.
  std::vector<std::byte> view, bundle;
  VectorTime seen{3, 0, 0};
  for (uint32_t v : {2u, 3u}) {
    std::byte b4[4];
    std::memcpy(b4, &v, 4);
    view.insert(view.end(), b4, b4 + 4);
  }
  vector_time_append(seen, 3, &view);
  a.encode_bundle(view_of(view), &bundle);
  WriteNotices fresh(2, 3);
  // A rank that has seen nothing cannot use it: intervals 1..3 are gone.
  EXPECT_FALSE(fresh.merge_bundle(view_of(bundle), [](Rank, uint32_t, const PageId *, size_t) {}));
}

TEST(WriteNotices, StorageStaysBoundedWhenEveryoneKeepsUp) {
  // Two ranks pass a lock back and forth 1000 times, each writing once per
  // hold: every hand-over tells the releaser what the acquirer has seen.
  WriteNotices r0(0, 2), r1(1, 2);
  size_t peak = 0;
  for (int i = 0; i < 1000; ++i) {
    WriteNotices &holder = i % 2 ? r1 : r0, &next = i % 2 ? r0 : r1;
    holder.add_own({(PageId)(i % 7)});
    ASSERT_TRUE(hand_over(holder, next));
    peak = std::max({peak, r0.intervals_kept(), r1.intervals_kept()});
    ASSERT_TRUE(r0.consistent() && r1.consistent());
  }
  EXPECT_LE(peak, 4u);
}

TEST(WriteNotices, BarrierFloorDropsEverything) {
  WriteNotices a(0, 2), b(1, 2);
  a.add_own({1});
  b.add_own({2});
  ASSERT_TRUE(hand_over(a, b));
  ASSERT_TRUE(hand_over(b, a));
  a.raise_all(VectorTime{1, 1});
  b.raise_all(VectorTime{1, 1});
  EXPECT_EQ(a.intervals_kept(), 0u);
  EXPECT_EQ(b.intervals_kept(), 0u);
  EXPECT_TRUE(a.consistent() && b.consistent());
}

TEST(WriteNotices, CheckFindsADroppedInterval) {
  WriteNotices a(0, 2);
  a.add_own({1});
  a.add_own({2});
  ASSERT_TRUE(a.consistent());
  WriteNoticesTestAccess::drop_oldest(a, 0);  // rank 1 has not seen interval 1
  EXPECT_FALSE(a.consistent());
#ifdef AGORA_CHECKS
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(a.add_own({3}), "internal check failed: consistent");
#endif
}

}  // namespace
}  // namespace agora
