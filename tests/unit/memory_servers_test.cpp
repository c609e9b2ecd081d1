// Homes with memory servers (AddressSpace::set_memory_servers,
// docs/memory-servers.md): on a compute rank every page that has a home is
// homed on a server, striped; pages without one (beyond the collective bump
// pointer, outside any placed run) still have none; on a server every page of
// the range has one. And the split into compute ranks and servers
// (MemoryServers, src/runtime/memory_servers) over a fake ComponentHost.
#include <gtest/gtest.h>

#include <vector>

#include "common/stats.h"
#include "memory/address_space.h"
#include "runtime/memory_servers/memory_servers.h"

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

// One rank of a job of `n`, recording what it sends.
struct FakeJob final : ComponentHost {
  FakeJob(Rank me, Rank n) : me(me), n(n) {}
  Rank rank() const override { return me; }
  Rank nranks() const override { return n; }
  void send(Rank dst, MsgHeader header, Payload) override { sent.push_back({dst, header}); }
  Stats &stats() override { return counters; }
  Rank me, n;
  std::vector<std::pair<Rank, MsgHeader>> sent;
  Stats counters;
};

TEST(MemoryServers, TheLastRanksServeAndTheOthersCompute) {
  Config config;
  config.memory_servers = 2;
  config.stripe_bytes = 8 * kPage;
  std::string error;
  FakeJob compute(1, 5), server(3, 5);
  MemoryServers on_compute(compute), on_server(server);
  ASSERT_TRUE(on_compute.decide(&config, kPage, &error)) << error;
  EXPECT_EQ(config.fetch, FetchMode::Messages);  // auto: pages from a server travel by message
  ASSERT_TRUE(on_server.decide(&config, kPage, &error)) << error;
  EXPECT_EQ(on_compute.compute_nranks(), 3);
  EXPECT_FALSE(on_compute.is_server());
  EXPECT_TRUE(on_server.is_server());
  EXPECT_TRUE(on_compute.is_server_rank(3));
  EXPECT_FALSE(on_compute.is_server_rank(2));
  EXPECT_EQ(on_compute.compute_host().nranks(), 3);  // the sync services' view
  EXPECT_EQ(on_compute.compute_host().rank(), 1);
  // A compute rank's finalize tells each server; a server counts them.
  on_compute.tell_done();
  ASSERT_EQ(compute.sent.size(), 2u);
  EXPECT_EQ(compute.sent[0].first, 3);
  EXPECT_EQ(compute.sent[1].first, 4);
  EXPECT_EQ(compute.sent[0].second.channel, Channel::Server);
  EXPECT_FALSE(on_server.any_compute_done());
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(on_server.computes_done());
    on_server.on_message(compute.sent[0].second, {});
  }
  EXPECT_TRUE(on_server.computes_done());
}

TEST(MemoryServers, WithoutServersEveryRankComputes) {
  Config config;
  std::string error;
  FakeJob job(0, 4);
  MemoryServers servers(job);
  ASSERT_TRUE(servers.decide(&config, kPage, &error)) << error;
  EXPECT_EQ(servers.compute_nranks(), 4);
  EXPECT_FALSE(servers.is_server_rank(3));
  EXPECT_EQ(config.fetch, FetchMode::Auto);
  servers.tell_done();
  EXPECT_TRUE(job.sent.empty());
}

TEST(MemoryServers, BadSplitsAreRefusedSayingWhy) {
  FakeJob job(0, 3);
  std::string error;
  Config all;
  all.memory_servers = 3;
  EXPECT_FALSE(MemoryServers(job).decide(&all, kPage, &error));
  EXPECT_NE(error.find("leaves no compute rank"), std::string::npos) << error;
  Config stripe;
  stripe.memory_servers = 1;
  stripe.stripe_bytes = kPage + 1;
  EXPECT_FALSE(MemoryServers(job).decide(&stripe, kPage, &error));
  EXPECT_NE(error.find("not a multiple of the page size"), std::string::npos) << error;
  Config one_sided;
  one_sided.memory_servers = 1;
  one_sided.stripe_bytes = kPage;
  one_sided.fetch = FetchMode::OneSided;
  EXPECT_FALSE(MemoryServers(job).decide(&one_sided, kPage, &error));
  EXPECT_NE(error.find("AGORA_FETCH=one-sided"), std::string::npos) << error;
}

}  // namespace
}  // namespace agora
