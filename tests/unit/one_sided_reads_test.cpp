// One-sided reads (OneSidedReads, src/runtime/one_sided/one_sided_reads.h)
// driven through a fake OneSidedHost: no MPI. The decision (whether a read
// can go one-sided: which pages this rank knows to be allocated at the
// home), where a read marks the home's metadata, the queue of completed
// reads, and the home's scan of the flags readers set.
#include "runtime/one_sided/one_sided_reads.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "memory/frame_slots.h"
#include "protocol/engine.h"

using namespace agora;

namespace {

constexpr size_t kPage = 4096;
// 64 Ki pages on 4 ranks: collective [0, 16384), placed [16384, 32768),
// arenas of 8192 pages from 32768.
constexpr PageId kPages = 65536;

struct FakeOneSidedHost final : OneSidedHost {
  Rank rank() const override { return 0; }
  Rank nranks() const override { return 4; }
  size_t page_size() const override { return kPage; }
  const AddressSpace &space() const override { return as; }
  PageId range_pages() const override { return kPages; }
  bool same_node(Rank r) const override { return !other_node.count(r); }
  Stats &stats() override { return counters; }

  std::byte *meta_alloc(size_t bytes, std::string *) override {
    meta.assign(bytes, std::byte{0});
    return meta.data();
  }
  void meta_free(std::byte *, size_t) override { meta.clear(); }
  bool every_rank(bool ok) override { return ok && others_agree; }
  bool open_windows(std::byte *, size_t, std::string *error) override {
    if (!windows_can_open) *error = "no windows here";
    return open = windows_can_open;
  }
  bool windows_open() const override { return open; }
  void close_windows() override { open = false; }
  bool read(Rank home, const Marks &m, std::byte *meta_out, uint32_t meta_bytes, size_t offset, std::byte *into,
            size_t bytes, std::string *error) override {
    reads.push_back({home, offset / kPage, bytes / kPage});
    last_marks = m;
    if (fail) {
      *error = "injected";
      return false;
    }
    if (meta_bytes) std::memset(meta_out, 0x11, meta_bytes);  // meta_out may be null when there is none
    if (bytes) std::memset(into, 0x22, bytes);
    return true;
  }
  void sync_meta() override { ++syncs; }
  void read_queued() override { ++queued_wakes; }
  uint32_t reserve_landing(uint32_t count) override {
    if (!pool) return FrameSlots::kNone;
    landing_reserved += count;
    return 7;
  }
  std::byte *landing_frames(uint32_t slot) override { return frames.data() + (slot - 7) * kPage; }
  void unreserve_landing(uint32_t, uint32_t count) override { landing_reserved -= count; }
  void deliver(Rank home, PageId first, uint32_t count, Payload m, Payload pages, uint32_t landing) override {
    delivered.push_back({home, first, count, m.size, pages.size, landing,
                         pages.size ? (unsigned)std::to_integer<unsigned>(pages.data[0]) : 0u});
  }

  AddressSpace as{0x200000000000ull, kPages *kPage, kPage, 4};
  std::set<Rank> other_node;
  bool others_agree = true, windows_can_open = true, open = false, fail = false, pool = false;
  std::vector<std::byte> meta, frames = std::vector<std::byte>(64 * kPage);
  Stats counters;
  struct Read {
    Rank home;
    PageId first, count;
  };
  std::vector<Read> reads;
  Marks last_marks{};
  int syncs = 0, queued_wakes = 0;
  uint32_t landing_reserved = 0;
  struct Delivered {
    Rank home;
    PageId first;
    uint32_t count;
    size_t meta_bytes, page_bytes;
    uint32_t landing;
    unsigned first_byte;
  };
  std::vector<Delivered> delivered;
};

struct OneSidedReadsTest : ::testing::Test {
  void SetUp() override {
    // 1024 pages allocated collectively, by block: 256 a rank.
    PageId first, count;
    ASSERT_TRUE(host.as.collective_reserve(1024 * kPage, Placement::Block, 0, &first, &count));
    ASSERT_EQ(first, 0u);
    ASSERT_EQ(host.as.home_of(256), 1);
    ASSERT_EQ(host.as.home_of(511), 1);
    ASSERT_EQ(host.as.home_of(512), 2);
  }
  void start(FetchMode fetch = FetchMode::Auto) {
    reads.alloc_meta(fetch);
    reads.open();
  }
  // What a reader's read leaves in this rank's metadata (as the home).
  void mark(PageId first, uint32_t count) {
    const OneSidedHost::Marks m = reads.marks(first, count);
    std::byte *meta = reads.home_meta();
    std::memset(meta + m.flag_offset, 1, m.flag_count);
    std::memset(meta + m.summary_offset, 1, m.summary_count);
  }
  FakeOneSidedHost host;
  OneSidedReads reads{host};
};

}  // namespace

TEST_F(OneSidedReadsTest, NoWindowsNoOneSidedReads) {
  EXPECT_FALSE(reads.may_read(1, 256, 4, 64));
  host.windows_can_open = false;
  start();
  EXPECT_FALSE(reads.may_read(1, 256, 4, 64));
  EXPECT_EQ(reads.home_meta(), nullptr);  // the windows could not open: no metadata to keep
}

TEST_F(OneSidedReadsTest, NoMetadataUnlessEveryRankHasIt) {
  host.others_agree = false;
  start();
  EXPECT_EQ(reads.home_meta(), nullptr);
  EXPECT_FALSE(host.open);
  EXPECT_FALSE(reads.may_read(1, 256, 4, 64));
}

TEST_F(OneSidedReadsTest, MessagesModeAllocatesNothing) {
  start(FetchMode::Messages);
  EXPECT_TRUE(host.meta.empty());
  EXPECT_FALSE(reads.may_read(1, 256, 4, 64));
}

TEST_F(OneSidedReadsTest, TheMetadataExistsBeforeTheWindowsOpen) {
  reads.alloc_meta(FetchMode::Auto);
  EXPECT_NE(reads.home_meta(), nullptr);  // an engine built before the windows may ask
  reads.open();
  EXPECT_EQ(reads.home_meta(), host.meta.data());
}

TEST_F(OneSidedReadsTest, CollectivePagesHomedThereAreRead) {
  start();
  EXPECT_TRUE(reads.may_read(1, 256, 64, kHomeMetaBytes));
  EXPECT_TRUE(reads.may_read(2, 600, 1, 0));
  EXPECT_FALSE(reads.may_read(0, 10, 1, 0));   // this rank's own pages
  EXPECT_FALSE(reads.may_read(4, 256, 1, 0));  // no such rank
  EXPECT_FALSE(reads.may_read(-1, 256, 1, 0));
  EXPECT_FALSE(reads.may_read(1, 256, 0, 0));                   // nothing to read
  EXPECT_FALSE(reads.may_read(1, 256, 65, 0));                  // more than one read may move
  EXPECT_FALSE(reads.may_read(1, 256, 1, kHomeMetaBytes + 1));  // more metadata than there is
  EXPECT_FALSE(reads.may_read(1, 500, 16, 0));                  // runs into rank 2's pages
  EXPECT_FALSE(reads.may_read(3, 1020, 8, 0));                  // past what is allocated
  EXPECT_FALSE(reads.may_read(1, kPages - 1, 2, 0));            // past the windows
}

TEST_F(OneSidedReadsTest, AnotherRanksHeapIsKnownOnlyToItsHome) {
  start();
  const PageId heap = host.as.arena_first_page(1);
  ASSERT_EQ(host.as.home_of(heap), 1);
  EXPECT_FALSE(reads.known_allocated_at(1, heap, 1));
  EXPECT_FALSE(reads.may_read(1, heap, 1, 0));
}

TEST_F(OneSidedReadsTest, PlacedRunsAreReadWhileTheyLive) {
  start();
  const PageId first = host.as.placed_first_page() + 100;
  CollectiveRun run{first, 8, Placement::OnRank, 3};
  EXPECT_FALSE(reads.may_read(3, first, 8, 0));  // not allocated yet
  ASSERT_TRUE(host.as.placed_insert(run));
  EXPECT_TRUE(reads.may_read(3, first, 8, 0));
  EXPECT_FALSE(reads.may_read(3, first, 9, 0));  // past its end
  EXPECT_FALSE(reads.may_read(2, first, 1, 0));  // homed elsewhere
}

TEST_F(OneSidedReadsTest, AutoAsksAHomeOnAnotherNode) {
  host.other_node = {1};
  start();
  EXPECT_FALSE(reads.may_read(1, 256, 4, 0));
  EXPECT_TRUE(reads.may_read(2, 512, 4, 0));
  OneSidedReads forced(host);
  forced.alloc_meta(FetchMode::OneSided);
  forced.open();
  EXPECT_TRUE(forced.may_read(1, 256, 4, 0));
}

TEST_F(OneSidedReadsTest, AReadMarksItsPagesFlagsAndEverySummaryItSpans) {
  start();
  const OneSidedHost::Marks m = reads.marks(4095, 2);
  // kHomeMetaBytes, then the summaries (16 for 64 Ki pages, padded to 64), then the flags.
  EXPECT_EQ(m.flag_offset, kHomeMetaBytes + 64 + 4095);
  EXPECT_EQ(m.flag_count, 2u);
  EXPECT_EQ(m.summary_offset, kHomeMetaBytes + 0);
  EXPECT_EQ(m.summary_count, 2u);
  const OneSidedHost::Marks one = reads.marks(8192 + 5, 1);
  EXPECT_EQ(one.summary_offset, kHomeMetaBytes + 2);
  EXPECT_EQ(one.summary_count, 1u);
}

TEST_F(OneSidedReadsTest, CompletedReadsAreDeliveredInOrderAndCounted) {
  start();
  ASSERT_TRUE(reads.read(1, 256, 4, 32));
  ASSERT_TRUE(reads.read(2, 512, 2, 32));
  EXPECT_FALSE(reads.read(1, host.as.arena_first_page(1), 1, 0));  // refused: nothing read
  ASSERT_EQ(host.reads.size(), 2u);
  EXPECT_EQ(host.reads[0].first, 256u);
  EXPECT_EQ(host.last_marks.flag_offset, kHomeMetaBytes + 64 + 512);
  EXPECT_EQ(host.counters.one_sided_reads, 2u);
  EXPECT_EQ(host.counters.one_sided_bytes, 32u + 4 * kPage + 32u + 2 * kPage);
  EXPECT_EQ(host.queued_wakes, 2);
  EXPECT_TRUE(host.delivered.empty());  // never from inside read
  EXPECT_EQ(reads.deliver(1), 1);
  EXPECT_EQ(reads.deliver(16), 1);
  ASSERT_EQ(host.delivered.size(), 2u);
  EXPECT_EQ(host.delivered[0].first, 256u);
  EXPECT_EQ(host.delivered[0].page_bytes, 4 * kPage);
  EXPECT_EQ(host.delivered[0].meta_bytes, 32u);
  EXPECT_EQ(host.delivered[0].first_byte, 0x22u);
  EXPECT_EQ(host.delivered[0].landing, FrameSlots::kNone);
  EXPECT_EQ(host.delivered[1].home, 2);
  EXPECT_EQ(reads.deliver(16), 0);
}

TEST_F(OneSidedReadsTest, PagesLandInThePoolWhereItHasRoom) {
  host.pool = true;
  start();
  ASSERT_TRUE(reads.read(1, 256, 4, 0));
  EXPECT_EQ(host.frames[0], std::byte{0x22});  // read into the reserved slots
  EXPECT_EQ(reads.deliver(16), 1);
  EXPECT_EQ(host.delivered[0].landing, 7u);
  EXPECT_EQ(host.delivered[0].page_bytes, 4 * kPage);
}

TEST_F(OneSidedReadsTest, AFailedReadGivesItsSlotsBackAndTheEngineAsksTheHome) {
  host.pool = true;
  host.fail = true;
  start();
  EXPECT_FALSE(reads.read(1, 256, 4, 0));
  EXPECT_EQ(host.landing_reserved, 0u);
  EXPECT_EQ(reads.queued(), 0u);
  EXPECT_EQ(host.counters.one_sided_reads, 0u);
}

TEST_F(OneSidedReadsTest, TheHomeReportsEachMarkedPageOnce) {
  start();
  mark(300, 3);
  mark(5000, 1);  // past the collective pages in use: never read one-sided, not scanned
  std::vector<PageId> pages;
  reads.collect_newly_shared(&pages);
  EXPECT_EQ(pages, (std::vector<PageId>{300, 301, 302}));
  pages.clear();
  reads.collect_newly_shared(&pages);
  EXPECT_TRUE(pages.empty());
  mark(301, 1);  // marked again: reported again
  reads.collect_newly_shared(&pages);
  EXPECT_EQ(pages, (std::vector<PageId>{301}));
}

TEST_F(OneSidedReadsTest, FlagsAreReadOnlyUnderASetSummary) {
  start();
  const OneSidedHost::Marks m = reads.marks(700, 1);
  reads.home_meta()[m.flag_offset] = std::byte{1};  // no summary: not looked at
  std::vector<PageId> pages;
  reads.collect_newly_shared(&pages);
  EXPECT_TRUE(pages.empty());
  reads.home_meta()[m.summary_offset] = std::byte{1};
  reads.collect_newly_shared(&pages);
  EXPECT_EQ(pages, (std::vector<PageId>{700}));
}

TEST_F(OneSidedReadsTest, PlacedPagesAreScannedWhileTheirRunLives) {
  start();
  const PageId first = host.as.placed_first_page() + 4096;
  CollectiveRun run{first, 16, Placement::OnRank, 0};
  mark(first + 3, 1);
  std::vector<PageId> pages;
  reads.collect_newly_shared(&pages);
  EXPECT_TRUE(pages.empty());  // no placed run opened yet
  reads.placed_opened(run);
  reads.collect_newly_shared(&pages);
  EXPECT_EQ(pages, (std::vector<PageId>{first + 3}));
  // A closed run's flags are cleared: a later allocation starts unshared.
  mark(first + 5, 1);
  reads.placed_closed(first, 16);
  pages.clear();
  reads.collect_newly_shared(&pages);
  EXPECT_TRUE(pages.empty());
}
