// sc's directory (src/protocol/sc) on three fake ranks: reads share a page,
// a write invalidates every other copy, a read of a modified page fetches it
// from its owner, unallocated pages fail; the directory invariants hold
// after each transaction and (AGORA_CHECKS) fire on messages the home did
// not ask for.
#include <gtest/gtest.h>

#include "fake_engine_host.h"
#include "protocol/sc/sc_engine.h"

namespace agora {
namespace {

using testing_support::FakeNet;

TEST(ScDirectory, ReadersShareWriterInvalidatesOwnerIsFetched) {
  FakeNet net(3, "sc", 64);
  auto &e = net.engines;
  // Page 0 is homed on rank 0 and starts writable there.
  EXPECT_EQ(e[0]->local_access(0), Access::Write);
  EXPECT_EQ(e[1]->local_access(0), Access::None);
  net.hosts[0]->frame(0)[3] = std::byte{42};

  ASSERT_EQ(net.fault(1, 0, Access::Read), 0);
  EXPECT_EQ(e[1]->local_access(0), Access::Read);
  EXPECT_EQ(e[0]->local_access(0), Access::Read);  // the home keeps a read copy
  EXPECT_EQ(net.hosts[1]->frame(0)[3], std::byte{42});
  EXPECT_EQ(net.hosts[1]->access[0], Access::Read);
  ASSERT_EQ(net.fault(2, 0, Access::Read), 0);

  // A write by rank 2: rank 1 and the home lose their copies.
  ASSERT_EQ(net.fault(2, 0, Access::Write), 0);
  EXPECT_EQ(e[2]->local_access(0), Access::Write);
  EXPECT_EQ(e[1]->local_access(0), Access::None);
  EXPECT_EQ(e[0]->local_access(0), Access::None);
  EXPECT_EQ(net.hosts[1]->counters.invalidations_received, 1u);
  EXPECT_EQ(net.hosts[0]->counters.invalidations_sent, 1u);  // the home's own copy needs no message

  // Rank 1 reads: the home fetches the page from its owner, which keeps a read copy.
  net.hosts[2]->frame(0)[3] = std::byte{43};
  ASSERT_EQ(net.fault(1, 0, Access::Read), 0);
  EXPECT_EQ(e[1]->local_access(0), Access::Read);
  EXPECT_EQ(e[2]->local_access(0), Access::Read);
  EXPECT_EQ(net.hosts[1]->frame(0)[3], std::byte{43});
  EXPECT_EQ(net.hosts[0]->frame(0)[3], std::byte{43});  // the home's frame is current again

  // The home writes its own page: every copy goes.
  ASSERT_EQ(net.fault(0, 0, Access::Write), 0);
  EXPECT_EQ(e[0]->local_access(0), Access::Write);
  EXPECT_EQ(e[1]->local_access(0), Access::None);
  EXPECT_EQ(e[2]->local_access(0), Access::None);
}

TEST(ScDirectory, UpgradeOfAReadCopyNeedsNoData) {
  FakeNet net(2, "sc", 64);
  ASSERT_EQ(net.fault(1, 0, Access::Read), 0);
  uint64_t fetched = net.hosts[1]->counters.pages_fetched;
  ASSERT_EQ(net.fault(1, 0, Access::Write), 0);
  EXPECT_EQ(net.hosts[1]->counters.pages_fetched, fetched);  // the copy it had is current
  EXPECT_EQ(net.engines[1]->local_access(0), Access::Write);
  EXPECT_EQ(net.engines[0]->local_access(0), Access::None);
}

TEST(ScDirectory, QueuedRequestsAreServedInOrder) {
  FakeNet net(3, "sc", 64);
  Waiter a, b;
  net.engines[1]->on_fault(0, Access::Write, &a);
  net.engines[2]->on_fault(0, Access::Write, &b);
  net.run();
  ASSERT_TRUE(a.done() && b.done());
  // Rank 1 got it first, then rank 2 took it (fetched from rank 1).
  EXPECT_EQ(net.engines[1]->local_access(0), Access::None);
  EXPECT_EQ(net.engines[2]->local_access(0), Access::Write);
}

TEST(ScDirectory, UnallocatedPagesFail) {
  FakeNet net(2, "sc", 64);
  net.hosts[0]->allocated = false;
  EXPECT_EQ(net.fault(1, 0, Access::Read), -5);
  EXPECT_EQ(net.fault(1, 2, Access::Write), -5);
  EXPECT_EQ(net.engines[1]->local_access(0), Access::None);
  EXPECT_EQ(net.fault(0, 1, Access::Read), 0);  // rank 1's pages are allocated
}

#ifdef AGORA_CHECKS
TEST(ScDirectory, UnsolicitedMessagesAtTheHomeAreCaught) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  FakeNet net(2, "sc", 64);
  // An invalidation acknowledgement for a page with no transaction.
  EXPECT_DEATH(net.engines[0]->on_message({Channel::Protocol, ScEngine::kInvalidateAck, 1, 0, 0, 0}, {}),
               "internal check failed: e.busy && e.acks_left > 0");
  // A page sent home that the home never fetched.
  std::vector<std::byte> page(64);
  EXPECT_DEATH(net.engines[0]->on_message({Channel::Protocol, ScEngine::kFetchData, 1, 0, 0, 0},
                                          {page.data(), page.size()}),
               "internal check failed");
  // A read grant without the page, for a rank that holds no copy.
  EXPECT_DEATH(net.engines[1]->on_message({Channel::Protocol, ScEngine::kGrant, 0, 0, (uint64_t)Access::Read, 0}, {}),
               "internal check failed");
}
#endif

}  // namespace
}  // namespace agora
