// Twins and diffs (src/protocol/shared/page_diff): encoding, applying,
// 2-way refresh and batches, against a byte-wise reference on random pages.
#include "protocol/shared/page_diff.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <tuple>

namespace agora {
namespace {

using Bytes = std::vector<std::byte>;

Bytes filled(size_t n, uint8_t v) { return Bytes(n, std::byte{v}); }

std::vector<std::tuple<size_t, Bytes>> runs_of(const Bytes &diff, size_t page_size) {
  std::vector<std::tuple<size_t, Bytes>> runs;
  bool ok =
      page_diff_for_each_run(page_size, diff.data(), diff.size(), [&](size_t off, const std::byte *b, size_t len) {
        runs.emplace_back(off, Bytes(b, b + len));
      });
  EXPECT_TRUE(ok);
  return runs;
}

// The reference: maximal runs of differing bytes, by a byte-at-a-time scan.
std::vector<std::tuple<size_t, Bytes>> reference_runs(const Bytes &page, const Bytes &twin) {
  std::vector<std::tuple<size_t, Bytes>> runs;
  for (size_t i = 0; i < page.size();) {
    if (page[i] == twin[i]) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < page.size() && page[i] != twin[i]) ++i;
    runs.emplace_back(start, Bytes(page.begin() + start, page.begin() + i));
  }
  return runs;
}

TEST(PageDiff, EqualPagesGiveAnEmptyDiff) {
  Bytes page = filled(4096, 7), twin = page, out;
  EXPECT_EQ(page_diff_encode(page.data(), twin.data(), page.size(), &out), 0u);
  EXPECT_TRUE(out.empty());
  Bytes target = filled(4096, 1);
  EXPECT_TRUE(page_diff_apply(target.data(), target.size(), out.data(), out.size()));
  EXPECT_EQ(target, filled(4096, 1));  // an empty diff changes nothing
}

TEST(PageDiff, WholePageIsOneRun) {
  Bytes page = filled(4096, 2), twin = filled(4096, 1), out;
  size_t n = page_diff_encode(page.data(), twin.data(), page.size(), &out);
  EXPECT_EQ(n, 4u + 4096u);
  auto runs = runs_of(out, 4096);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(std::get<0>(runs[0]), 0u);
  EXPECT_EQ(std::get<1>(runs[0]), page);
}

TEST(PageDiff, RunsAtThePageEndsAndInsideAWord) {
  Bytes twin = filled(64, 0), page = twin;
  page[0] = std::byte{1};   // first byte
  page[63] = std::byte{2};  // last byte
  page[9] = std::byte{3};   // one byte inside the second word: the run is cut to it
  page[10] = std::byte{4};
  Bytes out;
  page_diff_encode(page.data(), twin.data(), 64, &out);
  auto runs = runs_of(out, 64);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs, reference_runs(page, twin));
  EXPECT_EQ(std::get<0>(runs[2]), 63u);
  EXPECT_EQ(std::get<1>(runs[2]).size(), 1u);
}

TEST(PageDiff, PagesNotAMultipleOfTheWord) {
  Bytes twin = filled(13, 0), page = twin;
  page[12] = std::byte{9};
  Bytes out;
  page_diff_encode(page.data(), twin.data(), 13, &out);
  EXPECT_EQ(runs_of(out, 13), reference_runs(page, twin));
}

TEST(PageDiff, EncodingAppendsAfterWhatIsThere) {
  Bytes twin = filled(32, 0), page = twin, out = filled(5, 0xee);
  page[3] = std::byte{1};
  size_t n = page_diff_encode(page.data(), twin.data(), 32, &out);
  EXPECT_EQ(out.size(), 5 + n);
  EXPECT_EQ(out[0], std::byte{0xee});
}

TEST(PageDiff, MalformedDiffsAreRefused) {
  Bytes page = filled(64, 0);
  Bytes truncated_header = filled(3, 0);
  EXPECT_FALSE(page_diff_apply(page.data(), 64, truncated_header.data(), truncated_header.size()));
  // {offset 60, length 8}: reaches past a 64-byte page.
  Bytes past_end = {std::byte{60}, std::byte{0}, std::byte{8}, std::byte{0}};
  past_end.resize(12, std::byte{1});
  EXPECT_FALSE(page_diff_apply(page.data(), 64, past_end.data(), past_end.size()));
  // Length 4 announced, 2 bytes given.
  Bytes short_run = {std::byte{0}, std::byte{0}, std::byte{4}, std::byte{0}, std::byte{1}, std::byte{1}};
  EXPECT_FALSE(page_diff_apply(page.data(), 64, short_run.data(), short_run.size()));
  Bytes twin = filled(64, 0);
  EXPECT_FALSE(page_diff_apply_under(page.data(), twin.data(), 64, short_run.data(), short_run.size()));
}

TEST(PageDiff, RandomPagesMatchTheByteWiseReference) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 2000; ++round) {
    size_t size = 1 + rng() % 300;
    Bytes twin(size), page(size);
    for (auto &b : twin) b = std::byte(rng() % 4);  // few values: many equal bytes
    page = twin;
    int writes = rng() % 12;
    for (int k = 0; k < writes; ++k) {
      size_t at = rng() % size, len = 1 + rng() % std::min<size_t>(size - at, 20);
      for (size_t i = at; i < at + len; ++i) page[i] = std::byte(rng() % 4);
    }
    Bytes diff;
    page_diff_encode(page.data(), twin.data(), size, &diff);
    ASSERT_EQ(runs_of(diff, size), reference_runs(page, twin)) << "round " << round;
    Bytes copy = twin;
    ASSERT_TRUE(page_diff_apply(copy.data(), size, diff.data(), diff.size()));
    ASSERT_EQ(copy, page) << "round " << round;
  }
}

TEST(PageDiff, ApplyUnderKeepsThisRanksWrites) {
  // The twin takes the whole diff; the page only where this rank did not write.
  Bytes twin = filled(32, 0), page = twin;
  page[4] = std::byte{0xaa};  // a local write not yet sent
  Bytes remote = twin;
  remote[4] = std::byte{0x11};  // the same byte written elsewhere (older)
  remote[5] = std::byte{0x22};  // a neighbouring byte
  Bytes diff;
  page_diff_encode(remote.data(), twin.data(), 32, &diff);
  ASSERT_TRUE(page_diff_apply_under(page.data(), twin.data(), 32, diff.data(), diff.size()));
  EXPECT_EQ(page[4], std::byte{0xaa});
  EXPECT_EQ(page[5], std::byte{0x22});
  EXPECT_EQ(twin, remote);
  // The page's diff against its new twin is exactly the local write.
  Bytes mine;
  page_diff_encode(page.data(), twin.data(), 32, &mine);
  auto runs = runs_of(mine, 32);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(std::get<0>(runs[0]), 4u);
}

TEST(PageDiff, RefreshKeepingWritesIsDataPlusLocalWrites) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 500; ++round) {
    const size_t size = 128;
    Bytes twin(size), frame, data(size);
    for (auto &b : twin) b = std::byte(rng() % 3);
    frame = twin;
    std::vector<bool> written(size, false);
    for (int k = rng() % 10; k > 0; --k) {
      size_t at = rng() % size;
      frame[at] = std::byte(3 + rng() % 3);  // differs from every twin value
      written[at] = true;
    }
    for (auto &b : data) b = std::byte(rng() % 3);
    Bytes expected = data;
    for (size_t i = 0; i < size; ++i)
      if (written[i]) expected[i] = frame[i];
    page_refresh_keeping_writes(frame.data(), twin.data(), data.data(), size);
    ASSERT_EQ(frame, expected) << "round " << round;
    ASSERT_EQ(twin, data) << "round " << round;
  }
}

// A refresh while another thread of the rank stores to the same page (its
// own words, or half of a word whose other half the home changed): a store
// must never be undone, or the twin would hide it from every later diff.
TEST(PageDiff, RefreshKeepsStoresOfAConcurrentThread) {
  constexpr size_t kSize = 4096, kOwn = 5 * 8, kHalf = 6 * 8;
  alignas(64) static std::byte frame[kSize], twin[kSize], data[2][kSize];
  std::memset(frame, 0, kSize);
  std::memset(twin, 0, kSize);
  for (int k = 0; k < 2; ++k) {
    std::memset(data[k], 0x11 * (k + 1), kSize);
    std::memset(data[k] + kOwn, 0, 8);   // the home never changes the writer's word
    std::memset(data[k] + kHalf, 0, 4);  // nor its half of the next one
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> undone{0}, stores{0};
  std::thread writer([&] {
    auto *own = reinterpret_cast<uint64_t *>(frame + kOwn);
    auto *half = reinterpret_cast<uint32_t *>(frame + kHalf);
    for (uint64_t v = 1; !stop.load(std::memory_order_relaxed); ++v) {
      __atomic_store_n(own, v, __ATOMIC_RELAXED);
      __atomic_store_n(half, (uint32_t)v, __ATOMIC_RELAXED);
      if (__atomic_load_n(own, __ATOMIC_RELAXED) != v || __atomic_load_n(half, __ATOMIC_RELAXED) != (uint32_t)v)
        undone++;
      stores++;
    }
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  uint64_t refreshes = 0;
  while (std::chrono::steady_clock::now() < until || stores.load() < 1000)
    page_refresh_keeping_writes(frame, twin, data[refreshes++ % 2], kSize);
  stop = true;
  writer.join();
  EXPECT_EQ(undone.load(), 0u) << "over " << stores.load() << " stores and " << refreshes << " refreshes";
  EXPECT_EQ(std::memcmp(frame + kHalf + 4, data[(refreshes - 1) % 2] + kHalf + 4, 4), 0) << "the home's half";
}

TEST(DiffBatch, RoundTripInOrderWithEmptyDiffs) {
  Bytes twin = filled(64, 0), a = twin, b = twin;
  a[0] = std::byte{1};
  b[63] = std::byte{2};
  Bytes batch;
  EXPECT_GT(diff_batch_encode(&batch, 7, a.data(), twin.data(), 64), 0u);
  EXPECT_EQ(diff_batch_encode(&batch, 9, twin.data(), twin.data(), 64), 0u);  // sent even when empty
  Bytes diff_b;
  page_diff_encode(b.data(), twin.data(), 64, &diff_b);
  diff_batch_append(&batch, (PageId)1 << 40, diff_b);
  std::vector<std::pair<PageId, Bytes>> seen;
  ASSERT_TRUE(diff_batch_for_each(batch.data(), batch.size(), [&](PageId p, const std::byte *d, size_t n) {
    seen.emplace_back(p, Bytes(d, d + n));
  }));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, 7u);
  EXPECT_EQ(seen[1].first, 9u);
  EXPECT_TRUE(seen[1].second.empty());
  EXPECT_EQ(seen[2].first, (PageId)1 << 40);
  EXPECT_EQ(seen[2].second, diff_b);
  Bytes page = twin;
  ASSERT_TRUE(page_diff_apply(page.data(), 64, seen[0].second.data(), seen[0].second.size()));
  EXPECT_EQ(page, a);
}

TEST(DiffBatch, MalformedBatchesAreRefused) {
  Bytes twin = filled(64, 0), a = twin;
  a[5] = std::byte{1};
  Bytes batch;
  diff_batch_encode(&batch, 3, a.data(), twin.data(), 64);
  for (size_t cut = 1; cut < batch.size(); ++cut) {
    int calls = 0;
    EXPECT_FALSE(diff_batch_for_each(batch.data(), cut, [&](PageId, const std::byte *, size_t) { ++calls; }))
        << "cut at " << cut;
    EXPECT_EQ(calls, 0);
  }
  EXPECT_TRUE(diff_batch_for_each(batch.data(), 0, [](PageId, const std::byte *, size_t) { FAIL(); }));
}

}  // namespace
}  // namespace agora
