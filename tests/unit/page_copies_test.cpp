// Page copies in hlrc and regc (src/protocol/shared/page_copies), driven
// directly on one fake host: faults, twins, installs with 2-way refresh,
// refusals, invalidation, a home's first sharing; and the invariant check
// (page_copy_checks) on hand-made states, firing in AGORA_CHECKS builds.
#include "protocol/shared/page_copies.h"

#include <gtest/gtest.h>

#include <cstring>

#include "fake_engine_host.h"
#include "protocol/shared/page_copy_checks.h"

namespace agora {
namespace {

using testing_support::FakeHost;

struct PageCopiesTest : ::testing::Test {
  // Rank 1 of 2; odd pages are homed here, even pages on rank 0.
  FakeHost host{nullptr, 1, 2, 32};
  std::unordered_map<PageId, PageCopy> pages;
  std::vector<PageId> dirty;
  PageCopy &copy(PageId p) {
    PageCopy &s = pages[p];
    s.access = host.home_of(p) == host.rank() ? Access::Write : Access::None;
    return s;
  }
};

TEST_F(PageCopiesTest, InvalidCopyQueuesWaitersAndFetchesOnce) {
  PageCopy &s = copy(2);
  Waiter a, b;
  EXPECT_TRUE(page_copy_fault(host, 2, s, Access::Read, &a, &dirty, false));  // fetch now
  s.fetching = true;
  EXPECT_FALSE(page_copy_fault(host, 2, s, Access::Write, &b, &dirty, false));  // already fetching
  EXPECT_FALSE(a.done());
  EXPECT_TRUE(s.want_write);
  EXPECT_TRUE(page_copy_consistent(host, 2, s, false));

  std::vector<std::byte> data(32, std::byte{5});
  page_copy_install(host, 2, s, data.data(), &dirty, false);
  EXPECT_TRUE(a.done() && b.done());
  EXPECT_EQ(a.status, 0);
  // A waiting writer makes the copy dirty at once: a twin of the data.
  EXPECT_EQ(s.access, Access::Write);
  EXPECT_TRUE(s.dirty);
  EXPECT_EQ(s.twin, data);
  EXPECT_EQ(dirty, std::vector<PageId>{2});
  EXPECT_EQ(host.access[2], Access::Write);
  EXPECT_EQ(host.counters.pages_fetched, 1u);
  EXPECT_EQ(host.counters.twins, 1u);
  EXPECT_TRUE(page_copy_consistent(host, 2, s, false));
}

TEST_F(PageCopiesTest, FirstWriteOfAReadCopyTakesATwin) {
  PageCopy &s = copy(2);
  s.access = Access::Read;
  std::memset(host.frame(2), 3, 32);
  Waiter w;
  EXPECT_FALSE(page_copy_fault(host, 2, s, Access::Write, &w, &dirty, false));
  EXPECT_TRUE(w.done());
  EXPECT_TRUE(s.dirty);
  EXPECT_EQ(s.twin, std::vector<std::byte>(32, std::byte{3}));
  // A second write fault (another thread raced) takes no second twin.
  Waiter w2;
  page_copy_fault(host, 2, s, Access::Write, &w2, &dirty, false);
  EXPECT_EQ(dirty.size(), 1u);
  EXPECT_EQ(host.counters.twins, 1u);
}

TEST_F(PageCopiesTest, HomePagesAreTwinnedOnlyIfTheProtocolWantsIt) {
  PageCopy &s = copy(3);             // homed here
  page_copy_share_home(host, 3, s);  // another rank fetched it: writes are tracked
  EXPECT_EQ(s.access, Access::Read);
  Waiter w;
  page_copy_fault(host, 3, s, Access::Write, &w, &dirty, /*twin_home=*/false);
  EXPECT_TRUE(s.dirty);
  EXPECT_TRUE(s.twin.empty());
  EXPECT_TRUE(page_copy_consistent(host, 3, s, false));
  PageCopy &t = copy(5);
  page_copy_share_home(host, 5, t);
  Waiter w2;
  page_copy_fault(host, 5, t, Access::Write, &w2, &dirty, /*twin_home=*/true);
  EXPECT_EQ(t.twin.size(), 32u);
  EXPECT_TRUE(page_copy_consistent(host, 5, t, true));
}

TEST_F(PageCopiesTest, UnallocatedHomePageFailsTheFault) {
  host.allocated = false;
  PageCopy &s = copy(3);
  Waiter w;
  EXPECT_FALSE(page_copy_fault(host, 3, s, Access::Read, &w, &dirty, false));
  EXPECT_TRUE(w.done());
  EXPECT_EQ(w.status, -5);
}

TEST_F(PageCopiesTest, RefusedFetchFailsEveryWaiter) {
  PageCopy &s = copy(2);
  Waiter a, b;
  page_copy_fault(host, 2, s, Access::Read, &a, &dirty, false);
  page_copy_fault(host, 2, s, Access::Write, &b, &dirty, false);
  s.fetching = true;
  page_copy_refused(s, -5);
  EXPECT_EQ(a.status, -5);
  EXPECT_EQ(b.status, -5);
  EXPECT_FALSE(s.fetching || s.want_write);
  EXPECT_TRUE(page_copy_consistent(host, 2, s, false));
}

TEST_F(PageCopiesTest, InvalidatedDirtyCopyKeepsItsWritesAcrossARefetch) {
  PageCopy &s = copy(2);
  s.access = Access::Read;
  std::memset(host.frame(2), 0, 32);
  Waiter w;
  page_copy_fault(host, 2, s, Access::Write, &w, &dirty, false);
  host.frame(2)[7] = std::byte{0x77};  // this rank's write
  EXPECT_TRUE(page_copy_invalidate(host, 2, s));
  EXPECT_FALSE(page_copy_invalidate(host, 2, s));  // already invalid
  EXPECT_TRUE(s.dirty);
  EXPECT_EQ(host.access[2], Access::None);
  EXPECT_EQ(host.counters.notices_applied, 1u);
  EXPECT_TRUE(page_copy_consistent(host, 2, s, false));
  // The newer copy from the home: its bytes plus this rank's write.
  std::vector<std::byte> data(32, std::byte{1});
  Waiter r;
  EXPECT_TRUE(page_copy_fault(host, 2, s, Access::Read, &r, &dirty, false));
  s.fetching = true;
  page_copy_install(host, 2, s, data.data(), &dirty, false);
  EXPECT_EQ(host.frame(2)[7], std::byte{0x77});
  EXPECT_EQ(host.frame(2)[6], std::byte{1});
  EXPECT_EQ(s.twin, data);
  EXPECT_EQ(s.access, Access::Write);
}

TEST_F(PageCopiesTest, ConsistencyCheckRejectsImpossibleStates) {
  PageCopy ok = copy(2);
  EXPECT_TRUE(page_copy_consistent(host, 2, ok, false));
  PageCopy s = ok;
  s.fetching = true;
  s.access = Access::Read;  // a fetch for a valid copy
  EXPECT_FALSE(page_copy_consistent(host, 2, s, false));
  s = ok;
  s.dirty = true;  // dirty without a twin
  s.access = Access::Write;
  EXPECT_FALSE(page_copy_consistent(host, 2, s, false));
  s = ok;
  s.access = Access::Write;  // writable but untracked
  EXPECT_FALSE(page_copy_consistent(host, 2, s, false));
  s = ok;
  Waiter w;
  s.waiters.push_back(&w);  // a waiter with no fetch to wake it
  EXPECT_FALSE(page_copy_consistent(host, 2, s, false));
  s = ok;
  s.cached_elsewhere = true;  // not a home page
  EXPECT_FALSE(page_copy_consistent(host, 2, s, false));
  // A home page nobody fetched may be written untracked; once shared, not.
  PageCopy h = copy(3);
  EXPECT_TRUE(page_copy_consistent(host, 3, h, false));
  h.cached_elsewhere = true;
  EXPECT_FALSE(page_copy_consistent(host, 3, h, false));
}

#ifdef AGORA_CHECKS
TEST_F(PageCopiesTest, CorruptedCopyDiesInTheNextStep) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  PageCopy &s = copy(2);
  s.fetching = true;
  std::vector<std::byte> data(32);
  Waiter w;
  s.waiters.push_back(&w);
  s.cached_elsewhere = true;  // a flag only home pages may carry
  EXPECT_DEATH(page_copy_install(host, 2, s, data.data(), &dirty, false), "internal check failed");
  PageCopy &t = copy(4);
  t.access = Access::Read;
  t.fetching = true;
  EXPECT_DEATH(page_copy_invalidate(host, 4, t), "internal check failed");
}
#endif

}  // namespace
}  // namespace agora
