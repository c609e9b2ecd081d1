// Lock ids (LockIds, src/runtime/locks/lock_ids.h): collective creations
// take consecutive ids with a signature of the creating call, which lock
// managers compare across ranks; agora threads' creations take ids of their
// rank's own; the limit below address-named locks is enforced.
#include "runtime/locks/lock_ids.h"

#include <gtest/gtest.h>

#include <set>

using namespace agora;

TEST(LockIds, CollectiveCreationsTakeConsecutiveIdsWithSignatures) {
  LockIds ids(1 << 20);
  EXPECT_EQ(ids.create(4, 0x1234, false, 0), 0u);
  EXPECT_EQ(ids.create(2, 0x1234, false, 0), 4u);
  std::set<uint64_t> signatures;
  for (uint64_t id = 0; id < 6; ++id) {
    EXPECT_NE(ids.signature(id), 0u) << id;
    EXPECT_EQ(ids.signature(id) & 1, 1u);
    signatures.insert(ids.signature(id));
  }
  EXPECT_EQ(signatures.size(), 6u);  // every lock its own
  EXPECT_EQ(ids.signature(6), 0u);   // not created
}

TEST(LockIds, RanksThatCreatedAlikeAgreeAndOthersDoNot) {
  LockIds a(1 << 20), b(1 << 20), other_site(1 << 20), other_size(1 << 20), other_order(1 << 20);
  a.create(3, 0x40, false, 0);
  b.create(3, 0x40, false, 1);  // another rank, the same call
  other_site.create(3, 0x48, false, 1);
  other_size.create(4, 0x40, false, 1);
  other_order.create(0, 0x40, false, 1);  // a creation before it
  other_order.create(3, 0x40, false, 1);
  for (uint64_t id = 0; id < 3; ++id) {
    EXPECT_EQ(a.signature(id), b.signature(id));
    EXPECT_NE(a.signature(id), other_site.signature(id));
    EXPECT_NE(a.signature(id), other_size.signature(id));
    EXPECT_NE(a.signature(id), other_order.signature(id));
  }
}

TEST(LockIds, AgoraThreadsTakeIdsOfTheirRanksOwn) {
  LockIds ids(1 << 20);
  const uint64_t first = ids.create(5, 0x40, true, 3);
  EXPECT_EQ(first, (1ull << 62) | (3ull << 40));
  EXPECT_EQ(ids.create(1, 0x40, true, 3), first + 5);
  EXPECT_EQ(ids.signature(first), 0u);           // nobody else created it: nothing to compare
  EXPECT_EQ(ids.create(2, 0x40, false, 3), 0u);  // collective ids unaffected
}

TEST(LockIds, TheCollectiveIdsStopBelowTheLimit) {
  LockIds ids(10);
  EXPECT_EQ(ids.create(8, 0x40, false, 0), 0u);
  EXPECT_EQ(ids.create(3, 0x40, false, 0), UINT64_MAX);
  EXPECT_EQ(ids.create(2, 0x40, false, 0), 8u);  // exactly up to it
}
