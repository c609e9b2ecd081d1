// hlrc's intervals and home (src/protocol/hlrc) on two fake ranks: a write
// to a cached copy travels as a diff to the home at the release, the home's
// version of the page rises, an acquirer is invalidated and refetches the
// written bytes; (AGORA_CHECKS) a diff applied twice is caught.
#include <gtest/gtest.h>

#include "fake_engine_host.h"
#include "protocol/hlrc/hlrc_engine.h"

namespace agora {
namespace {

using testing_support::FakeNet;

TEST(HlrcHome, DiffsReachTheHomeAndNoticesInvalidate) {
  FakeNet net(3, "hlrc", 64);
  ASSERT_EQ(net.fault(1, 0, Access::Write), 0);  // fetch, twin, write access
  EXPECT_EQ(net.engines[1]->local_access(0), Access::Write);
  ASSERT_EQ(net.fault(2, 0, Access::Read), 0);  // another reader's copy
  net.hosts[1]->frame(0)[9] = std::byte{7};
  bool published = false;
  net.engines[1]->release([&] { published = true; });
  EXPECT_FALSE(published);  // not before the home acknowledged the diff
  net.run();
  EXPECT_TRUE(published);
  EXPECT_EQ(net.hosts[0]->frame(0)[9], std::byte{7});
  EXPECT_EQ(net.hosts[1]->counters.diffs_sent, 1u);
  EXPECT_EQ(net.engines[1]->local_access(0), Access::Read);  // protected for the next interval

  // Rank 2 acquires from rank 1: the notice invalidates its copy, a fetch brings the write.
  std::vector<std::byte> view, info;
  net.engines[2]->acquirer_view(&view);
  net.engines[1]->release_info({view.data(), view.size()}, &info);
  net.engines[2]->acquire({info.data(), info.size()});
  EXPECT_EQ(net.engines[2]->local_access(0), Access::None);
  ASSERT_EQ(net.fault(2, 0, Access::Read), 0);
  EXPECT_EQ(net.hosts[2]->frame(0)[9], std::byte{7});
}

#ifdef AGORA_CHECKS
TEST(HlrcHome, ADiffAppliedTwiceIsCaught) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  FakeNet net(2, "hlrc", 64);
  ASSERT_EQ(net.fault(1, 0, Access::Write), 0);
  net.hosts[1]->frame(0)[1] = std::byte{1};
  net.engines[1]->release([] {});
  ASSERT_EQ(net.queue.size(), 1u);
  FakeNet::Msg diffs = net.queue.front();
  ASSERT_EQ(diffs.header.op, HlrcEngine::kDiffs);
  net.run();
  EXPECT_DEATH(net.engines[0]->on_message(diffs.header, {diffs.payload.data(), diffs.payload.size()}),
               "internal check failed");
}
#endif

}  // namespace
}  // namespace agora
