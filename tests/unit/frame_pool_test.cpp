// The bounded cache's frame pool: the slot bookkeeping (src/memory/
// frame_slots.h) and, on this kernel, the mappings (platform::frame_pool_map,
// vm_map_back): a slot mapped over a page shows the slot's bytes, mapping
// the memory file back shows the file's and merges the mappings again, and
// a page mapped back inside a write-tracked view can be tracked again.
#include "memory/frame_slots.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "platform/platform.h"
#include "platform/write_tracker_linux.h"

using namespace agora;

namespace {

constexpr size_t kPage = 4096;

size_t mappings() {
  std::ifstream maps("/proc/self/maps");
  size_t n = 0;
  for (std::string line; std::getline(maps, line);) ++n;
  return n;
}

// A range reserved as the runtime reserves global memory, at a free address.
void reserve_view(size_t pages, platform::GlobalRange *range) {
  void *probe = mmap(nullptr, pages * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(probe, MAP_FAILED);
  munmap(probe, pages * kPage);
  std::string error;
  ASSERT_TRUE(platform::vm_reserve((uintptr_t)probe, pages * kPage, range, &error)) << error;
  ASSERT_TRUE(platform::vm_exclude_from_fork(*range, &error)) << error;
}

}  // namespace

TEST(FrameSlots, RunsTakeConsecutiveSlotsAndFreedRunsAreReused) {
  FrameSlots slots(8);
  EXPECT_FALSE(slots.any_held());
  for (PageId p = 100; p < 104; ++p) EXPECT_EQ(slots.assign(p), p - 100);
  EXPECT_EQ(slots.slot_of(102), 2u);
  EXPECT_EQ(slots.slot_of(99), FrameSlots::kNone);
  EXPECT_EQ(slots.assign(100), FrameSlots::kNone);  // holds one already
  EXPECT_FALSE(slots.mapped(101));
  slots.set_mapped(101, true);
  EXPECT_TRUE(slots.mapped(101));
  // An unrelated page takes the next free slot; its successor the one after.
  EXPECT_EQ(slots.assign(500), 4u);
  EXPECT_EQ(slots.assign(501), 5u);
  // Free the first run: the next run takes it again (the lowest free
  // slots), and runs on above the slots in use.
  for (PageId p = 100; p < 104; ++p) EXPECT_TRUE(slots.release(p));
  EXPECT_FALSE(slots.release(100));
  EXPECT_FALSE(slots.mapped(101));
  EXPECT_EQ(slots.free_slots(), 6u);
  EXPECT_EQ(slots.assign(700), 0u);
  EXPECT_EQ(slots.assign(701), 1u);
  EXPECT_EQ(slots.assign(702), 2u);
  EXPECT_EQ(slots.assign(703), 3u);
  EXPECT_EQ(slots.assign(704), 6u);  // slot 4 is page 500's: the lowest free one
  EXPECT_EQ(slots.assign(705), 7u);
  EXPECT_EQ(slots.free_slots(), 0u);
  EXPECT_EQ(slots.assign(9), FrameSlots::kNone);  // full
  std::vector<PageId> held;
  slots.held_in(699, 5, &held);
  EXPECT_EQ(held, (std::vector<PageId>{700, 701, 702, 703}));
  held.clear();
  slots.held_in(0, ~PageId(0) / 2, &held);  // a range longer than the pages held
  EXPECT_EQ(held, (std::vector<PageId>{500, 501, 700, 701, 702, 703, 704, 705}));
}

TEST(FrameSlots, LandingRunsAreConsecutiveFreeSlotsThatPagesAdopt) {
  FrameSlots slots(10);
  EXPECT_EQ(slots.assign(1), 0u);
  EXPECT_EQ(slots.assign(50), 1u);
  EXPECT_EQ(slots.assign(60), 2u);
  EXPECT_TRUE(slots.release(50));  // slot 1 free, alone
  const uint32_t landing = slots.reserve_run(4);
  EXPECT_EQ(landing, 3u);  // not slot 1: a run needs 4 in a row
  EXPECT_EQ(slots.free_slots(), 10u - 2 - 4);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_TRUE(slots.reserved(landing + i));
  EXPECT_FALSE(slots.reserved(1));
  EXPECT_EQ(slots.assign(70), 1u);  // the lowest free one, not a reserved one
  EXPECT_EQ(slots.assign(80), 7u);
  slots.adopt(landing + 1, 201);
  EXPECT_EQ(slots.slot_of(201), 4u);
  EXPECT_FALSE(slots.reserved(4));
  for (uint32_t i = 0; i < 4; ++i)
    if (slots.reserved(landing + i)) slots.unreserve(landing + i);
  EXPECT_EQ(slots.free_slots(), 10u - 5);              // pages 1, 60, 70, 80, 201
  EXPECT_EQ(slots.reserve_run(3), FrameSlots::kNone);  // free: 3, 5-6, 8-9
  EXPECT_EQ(slots.reserve_run(0), FrameSlots::kNone);
  EXPECT_EQ(slots.reserve_run(2), 5u);  // the lowest run of two
}

// A page fetched, dropped and fetched again, over and over (a lock's page
// handed back and forth), takes the same slot each time: the pool's memory
// does not creep through every slot (tests/mpi/lrc.c handoffs checks the
// resident memory of a rank doing that 100 000 times).
TEST(FrameSlots, ReuseStaysAtTheBottom) {
  FrameSlots slots(1000);
  EXPECT_EQ(slots.assign(5), 0u);
  for (int i = 0; i < 5000; ++i) {
    EXPECT_EQ(slots.assign(77), 1u);
    const uint32_t landing = slots.reserve_run(4);
    EXPECT_EQ(landing, 2u);
    for (uint32_t k = 0; k < 4; ++k) slots.unreserve(landing + k);
    EXPECT_TRUE(slots.release(77));
  }
}

TEST(FramePool, SlotsMapOverTheViewAndTheMemoryFileMapsBack) {
  const size_t pages = 64;
  platform::GlobalRange range;
  ASSERT_NO_FATAL_FAILURE(reserve_view(pages, &range));
  std::string error;
  platform::FramePool pool;
  ASSERT_TRUE(platform::frame_pool_open(8, kPage, &pool, &error)) << error;
  for (size_t i = 0; i < pages; ++i) range.service_view[i * kPage] = (std::byte)(i + 1);  // the file's bytes
  for (size_t s = 0; s < 8; ++s) pool.view[s * kPage] = (std::byte)(200 + s);             // the slots'
  const size_t before = mappings();
  // Pages 10..13 over slots 2..5, readable: the slots' bytes, not the file's.
  ASSERT_TRUE(platform::frame_pool_map(pool, range.app_view + 10 * kPage, 2, 4, Access::Read));
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(range.app_view[(10 + i) * kPage], (std::byte)(202 + i));
  EXPECT_GT(mappings(), before);
  // Writable: a write through the view lands in the slot.
  ASSERT_TRUE(platform::vm_protect(range.app_view + 10 * kPage, 4 * kPage, Access::Write));
  range.app_view[11 * kPage + 7] = (std::byte)77;
  EXPECT_EQ(pool.view[3 * kPage + 7], (std::byte)77);
  EXPECT_NE(range.service_view[11 * kPage + 7], (std::byte)77);
  // Back: the file's bytes again once opened, and the mappings merged.
  ASSERT_TRUE(platform::vm_map_back(range, range.app_view + 10 * kPage, 4 * kPage, 10 * kPage));
  EXPECT_EQ(mappings(), before);
  ASSERT_TRUE(platform::vm_protect(range.app_view, pages * kPage, Access::Read));
  for (size_t i = 10; i < 14; ++i) EXPECT_EQ(range.app_view[i * kPage], (std::byte)(i + 1));
  ASSERT_TRUE(platform::vm_protect(range.app_view, pages * kPage, Access::None));
  EXPECT_EQ(pool.view[3 * kPage + 7], (std::byte)77);  // the slot keeps its memory
  platform::frame_pool_close(&pool);
  platform::vm_release(&range);
}

TEST(FramePool, PagesMappedBackInsideATrackedViewCanBeTrackedAgain) {
  platform::WriteTracker tracker;
  std::string why;
  if (!tracker.open(&why)) GTEST_SKIP() << "write tracking unavailable: " << why;
  const size_t pages = 32;
  platform::GlobalRange range;
  ASSERT_NO_FATAL_FAILURE(reserve_view(pages, &range));
  std::string error;
  ASSERT_TRUE(tracker.register_whole(range.app_view, pages * kPage, &error)) << error;
  platform::FramePool pool;
  ASSERT_TRUE(platform::frame_pool_open(4, kPage, &pool, &error)) << error;
  const size_t before = mappings();
  std::byte *page5 = range.app_view + 5 * kPage;
  ASSERT_TRUE(platform::frame_pool_map(pool, page5, 0, 2, Access::Read));
  ASSERT_TRUE(platform::vm_map_back(range, page5, 2 * kPage, 5 * kPage));
  ASSERT_TRUE(tracker.register_again(page5, 2 * kPage, &error)) << error;
  EXPECT_EQ(mappings(), before);  // registered like its neighbours: merged
  // The page is now a home page whose writes are tracked.
  ASSERT_TRUE(platform::vm_protect(page5, kPage, Access::Write));
  ASSERT_TRUE(tracker.track(page5, kPage, &error)) << error;
  page5[3] = (std::byte)1;
  std::vector<platform::WriteTracker::Run> written;
  ASSERT_TRUE(tracker.collect(page5, kPage, &written, &error)) << error;
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].addr, (uintptr_t)page5);
  platform::frame_pool_close(&pool);
  tracker.close();
  platform::vm_release(&range);
}
