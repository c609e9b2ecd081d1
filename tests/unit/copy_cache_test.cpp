// The bounded cache of remote pages and its frame pool (CopyCache,
// src/runtime/cache/copy_cache.h) driven through a fake CacheHost: no MPI,
// no OS call. The fake plays the runtime's part: a protection change goes
// through the cache (note, defer) before it is recorded, and the runtime's
// protect_run maps pooled copies in through the cache; the engine's evict
// drops the copy as the engines do (set_access to none).
#include "runtime/cache/copy_cache.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>
#include <vector>

using namespace agora;

namespace {

constexpr size_t kPage = 4096;
constexpr PageId kRemote = 1000;  // pages from here on are homed on rank 1; below, here (rank 0)

struct FakeCacheHost final : CacheHost {
  Rank rank() const override { return 0; }
  size_t page_size() const override { return kPage; }
  Rank home_of(PageId page) const override { return page < kRemote ? 0 : 1; }
  uintptr_t view_addr(PageId page) const override { return 0x100000 + page * kPage; }
  Stats &stats() override { return counters; }

  Access home_access() const override { return Access::Write; }
  Access local_access(PageId page) const override {
    auto it = access.find(page);
    return it != access.end() ? it->second : (page < kRemote ? Access::Write : Access::None);
  }
  bool reclaim_home(PageId page) override {
    reclaimed.push_back(page);
    return true;  // the readers' acks come later: the page stays apart until then
  }
  ProtocolEngine::Eviction evict(PageId page) override {
    if (busy.count(page)) return ProtocolEngine::Eviction::Busy;
    evicted.push_back(page);
    set_access(page, 1, Access::None);  // as an engine drops its copy
    return ProtocolEngine::Eviction::Dropped;
  }
  void end_evictions() override { ++evictions_ended; }
  bool frame_in_use(PageId page) const override { return in_use.count(page) != 0; }

  void protect_run(PageId first, PageId count, Access a) override {
    protections.emplace_back(first, count, a);
    for (PageId p = first; p < first + count; ++p) access[p] = a;
    if (cache->pool_frames_held()) cache->protect_pooled(first, count, a);
  }
  void protect_view(void *, PageId, Access) override { ++view_protections; }
  void discard_frames(PageId first, PageId count) override { discards.emplace_back(first, count); }
  void map_back(void *, PageId first, PageId count) override { mapped_back.emplace_back(first, count); }
  bool pool_open(uint64_t slots, platform::FramePool *pool, std::string *) override {
    memory.assign(slots * kPage, std::byte{0});
    pool->view = memory.data();
    pool->slots = slots;
    return true;
  }
  void pool_close(platform::FramePool *pool) override { pool->view = nullptr; }
  void pool_map(const platform::FramePool &, void *, uint32_t slot, PageId count, Access) override {
    pool_maps.emplace_back(slot, count);
  }

  // The runtime's set_access_run.
  void set_access(PageId first, PageId count, Access a) {
    cache->note(first, count, a);
    if (cache->defer(first, count, a)) {
      for (PageId p = first; p < first + count; ++p) access[p] = a;  // the engine's view: dropped
      return;
    }
    protect_run(first, count, a);
  }

  CopyCache *cache = nullptr;
  Stats counters;
  std::map<PageId, Access> access;
  std::set<PageId> busy, in_use;
  std::vector<PageId> evicted, reclaimed;
  int evictions_ended = 0, view_protections = 0;
  std::vector<std::tuple<PageId, PageId, Access>> protections;
  std::vector<std::pair<PageId, PageId>> discards, mapped_back;
  std::vector<std::pair<uint32_t, PageId>> pool_maps;
  std::vector<std::byte> memory;
};

struct CopyCacheTest : ::testing::Test {
  void open(uint64_t pages, CacheFrames frames, uint64_t map_limit = 0, bool reclaims_home = false) {
    Config config;
    config.cache_bytes = pages * kPage;
    config.cache_policy = CachePolicy::Fifo;
    config.cache_frames = frames;
    std::string error;
    ASSERT_TRUE(cache.open(config, map_limit, reclaims_home, false, &error)) << error;
  }
  // Installs read copies of `count` remote pages from `first`, one at a time.
  void install(PageId first, PageId count, Access a = Access::Read) {
    for (PageId p = first; p < first + count; ++p) {
      cache.replacing_frame(p);
      host.set_access(p, 1, a);
    }
  }
  FakeCacheHost host;
  CopyCache cache{host};
  CopyCacheTest() { host.cache = &cache; }
};

}  // namespace

TEST_F(CopyCacheTest, TooSmallABoundIsRefusedSayingWhy) {
  Config config;
  config.cache_bytes = 10 * kPage;
  std::string error;
  EXPECT_FALSE(cache.open(config, 0, false, false, &error));
  EXPECT_NE(error.find("the cache needs at least 64"), std::string::npos) << error;
}

TEST_F(CopyCacheTest, TheKernelsMappingLimitBoundsAnUnsetCache) {
  open(0, CacheFrames::Discard, 4 * 100);  // limit/4 mappings: 100 pages
  ASSERT_NE(cache.copies(), nullptr);
  EXPECT_EQ(cache.copies()->capacity(), 100u);
}

TEST_F(CopyCacheTest, TrimEvictsTheOldestBelowTheBoundInOneRun) {
  open(64, CacheFrames::Discard);
  install(kRemote, 64);
  cache.trim();
  EXPECT_TRUE(host.evicted.empty());  // within the bound
  install(kRemote + 64, 1);
  EXPECT_EQ(host.counters.cache_resident_peak, 65u);
  host.protections.clear();
  cache.trim();
  // Over: a batch down to 64 - 64/16 = 60 copies, the oldest first (fifo);
  // their protection changes and frame discards each in one run.
  EXPECT_EQ(host.evicted, (std::vector<PageId>{kRemote, kRemote + 1, kRemote + 2, kRemote + 3, kRemote + 4}));
  EXPECT_EQ(cache.copies()->resident(), 60u);
  ASSERT_EQ(host.protections.size(), 1u);
  EXPECT_EQ(host.protections[0], std::make_tuple(kRemote, PageId(5), Access::None));
  EXPECT_EQ(host.discards, (std::vector<std::pair<PageId, PageId>>{{kRemote, 5}}));
  EXPECT_EQ(host.evictions_ended, 1);
}

TEST_F(CopyCacheTest, WrittenVictimsAreProtectedBeforeEvictionAndBusyOnesStay) {
  open(64, CacheFrames::Discard);
  install(kRemote, 65);
  host.access[kRemote + 1] = host.access[kRemote + 2] = Access::Write;  // written since
  host.busy = {kRemote + 3};
  host.protections.clear();
  cache.trim();
  // The written victims become read-only first (one run), before any evict.
  ASSERT_GE(host.protections.size(), 1u);
  EXPECT_EQ(host.protections[0], std::make_tuple(kRemote + 1, PageId(2), Access::Read));
  // The busy copy is passed over; the next oldest goes instead.
  EXPECT_EQ(host.evicted, (std::vector<PageId>{kRemote, kRemote + 1, kRemote + 2, kRemote + 4, kRemote + 5}));
  EXPECT_EQ(cache.copies()->resident(), 60u);
  EXPECT_TRUE(cache.copies()->holds(kRemote + 3));
  EXPECT_EQ(host.discards, (std::vector<std::pair<PageId, PageId>>{{kRemote, 3}, {kRemote + 4, 2}}));
}

TEST_F(CopyCacheTest, HomePagesApartAreReclaimedOnceEach) {
  open(0, CacheFrames::Discard, 4 * 32, true);  // 32 mappings: 16 for copies, 16 for home pages apart
  ASSERT_NE(cache.home_apart(), nullptr);
  EXPECT_EQ(cache.home_apart()->capacity(), 16u);
  for (PageId p = 0; p < 20; ++p) host.set_access(p, 1, Access::Read);  // shared: apart from Write
  cache.trim();
  EXPECT_EQ(host.reclaimed, (std::vector<PageId>{0, 1, 2, 3}));
  EXPECT_EQ(host.counters.cache_home_reclaims, 4u);
  // Under way (still Read): not asked again.
  cache.trim();
  EXPECT_EQ(host.reclaimed.size(), 4u);
  // The reclaims finish: back at the home's access, no longer apart.
  for (PageId p = 0; p < 4; ++p) host.set_access(p, 1, Access::Write);
  EXPECT_EQ(cache.home_apart()->resident(), 16u);
  cache.trim();
  EXPECT_EQ(host.reclaimed.size(), 4u);
}

TEST_F(CopyCacheTest, PooledCopiesMapInAndTheirSlotsGoBackAtEviction) {
  open(64, CacheFrames::Pool);
  ASSERT_TRUE(cache.has_pool());
  install(kRemote, 3);
  // Consecutive slots, each mapped in at its install.
  for (PageId p = kRemote; p < kRemote + 3; ++p) {
    EXPECT_EQ(cache.slots()->slot_of(p), p - kRemote);
    EXPECT_EQ(cache.pooled_frame(p), host.memory.data() + (p - kRemote) * kPage);
  }
  EXPECT_EQ(cache.pooled_frame(kRemote + 3), nullptr);
  EXPECT_EQ(host.pool_maps, (std::vector<std::pair<uint32_t, PageId>>{{0, 1}, {1, 1}, {2, 1}}));
  EXPECT_EQ(host.counters.cache_frames_pooled, 3u);
  install(kRemote + 3, 62);
  host.mapped_back.clear();
  cache.trim();
  // Evicted pooled copies: the memory file mapped back over them, their
  // slots free, nothing discarded.
  EXPECT_EQ(host.mapped_back, (std::vector<std::pair<PageId, PageId>>{{kRemote, 5}}));
  EXPECT_TRUE(host.discards.empty());
  EXPECT_EQ(cache.slots()->slot_of(kRemote), FrameSlots::kNone);
  EXPECT_EQ(cache.slots()->slot_of(kRemote + 5), 5u);
}

TEST_F(CopyCacheTest, ALandedRunIsAdoptedAndMapsInOneCallAndUnadoptedSlotsGoBack) {
  open(64, CacheFrames::Pool);
  const uint32_t slots_free = cache.slots()->free_slots();
  const uint32_t slot = cache.reserve_landing(4);
  ASSERT_NE(slot, FrameSlots::kNone);
  cache.land(kRemote + 10, 4, slot);
  // Three of the four pages are installed (the engine dropped the last).
  for (PageId p = kRemote + 10; p < kRemote + 13; ++p) cache.replacing_frame(p);
  host.set_access(kRemote + 10, 3, Access::Read);
  EXPECT_EQ(host.pool_maps, (std::vector<std::pair<uint32_t, PageId>>{{slot, 3}}));
  cache.end_landing();
  EXPECT_EQ(cache.slots()->free_slots(), slots_free - 3);
  EXPECT_FALSE(cache.slots()->reserved(slot + 3));
}

TEST_F(CopyCacheTest, ARepliesRunReservesConsecutiveSlots) {
  open(64, CacheFrames::Pool);
  install(kRemote, 1);  // slot 0
  EXPECT_TRUE(cache.fill_from_pool(kRemote + 20, 3));
  for (PageId p = kRemote + 20; p < kRemote + 23; ++p) cache.replacing_frame(p);
  EXPECT_EQ(cache.slots()->slot_of(kRemote + 20), 1u);
  EXPECT_EQ(cache.slots()->slot_of(kRemote + 22), 3u);
  // Opened together: the run maps in one call.
  host.set_access(kRemote + 20, 3, Access::Read);
  EXPECT_EQ(host.pool_maps.back(), std::make_pair(1u, PageId(3)));
}

TEST_F(CopyCacheTest, ClosedCopiesGiveTheirSlotsBackUnlessTheEngineNeedsTheFrame) {
  open(64, CacheFrames::Pool);
  install(kRemote, 4);
  host.in_use = {kRemote + 1};                // a dirty copy's frame, diffed later
  host.set_access(kRemote, 2, Access::None);  // invalidated
  cache.trim();
  EXPECT_EQ(host.mapped_back, (std::vector<std::pair<PageId, PageId>>{{kRemote, 1}}));
  EXPECT_EQ(cache.slots()->slot_of(kRemote), FrameSlots::kNone);
  EXPECT_NE(cache.slots()->slot_of(kRemote + 1), FrameSlots::kNone);
  host.in_use.clear();
  cache.trim();  // asked again
  EXPECT_EQ(cache.slots()->slot_of(kRemote + 1), FrameSlots::kNone);
  // Freed pages: their slots go back, the copies are forgotten.
  cache.forget(kRemote + 2, 2);
  EXPECT_EQ(cache.slots()->slot_of(kRemote + 2), FrameSlots::kNone);
  EXPECT_FALSE(cache.copies()->holds(kRemote + 3));
  EXPECT_FALSE(cache.pool_frames_held());
}
