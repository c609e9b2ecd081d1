// The home write tracker (src/platform/write_tracker_linux.h) on this
// kernel: written pages are reported exactly once and re-armed, writes
// through the other view are not reported, mprotect keeps the armed state,
// untracked pages are never reported, and a process that may not use
// userfaultfd gets an unavailable tracker with a reason.
#include "platform/write_tracker_linux.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <set>
#include <thread>

using agora::platform::WriteTracker;

namespace {

constexpr size_t kPage = 4096;

// One memfd mapped twice, like the global range's application and service views.
struct TwoViews {
  size_t pages;
  char *app = nullptr, *svc = nullptr;
  int fd = -1;
  explicit TwoViews(size_t n) : pages(n) {
    fd = memfd_create("write-tracker-test", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, (off_t)(n * kPage)), 0);
    app = (char *)mmap(nullptr, n * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    svc = (char *)mmap(nullptr, n * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT_NE(app, MAP_FAILED);
    EXPECT_NE(svc, MAP_FAILED);
  }
  ~TwoViews() {
    munmap(app, pages * kPage);
    munmap(svc, pages * kPage);
    close(fd);
  }
  char *page(size_t i) { return app + i * kPage; }
};

// The page indexes reported written in [views.app, +pages).
std::set<size_t> collect(WriteTracker &t, TwoViews &v, size_t first = 0, size_t count = 0) {
  if (count == 0) count = v.pages;
  std::vector<WriteTracker::Run> runs;
  std::string error;
  EXPECT_TRUE(t.collect(v.page(first), count * kPage, &runs, &error)) << error;
  std::set<size_t> pages;
  for (const auto &r : runs)
    for (size_t i = 0; i < r.pages; ++i) pages.insert((r.addr - (uintptr_t)v.app) / kPage + i);
  return pages;
}

// Every test runs with the tracker as open() chooses it (asynchronous where
// the kernel can) and in its synchronous mode (a handler thread resolves
// each first write), which older kernels get.
class WriteTrackerModes : public ::testing::TestWithParam<bool> {};

#define OPEN_OR_SKIP(t) \
  std::string why_;     \
  if (!(t).open(&why_, GetParam())) GTEST_SKIP() << "write tracking unavailable: " << why_

}  // namespace

TEST_P(WriteTrackerModes, ReportsWrittenPagesOnceAndRearms) {
  WriteTracker t;
  OPEN_OR_SKIP(t);
  TwoViews v(256);
  std::string error;
  ASSERT_TRUE(t.track(v.app, v.pages * kPage, &error)) << error;
  EXPECT_TRUE(collect(t, v).empty());
  v.page(3)[0] = 1;
  v.page(4)[100] = 1;
  v.page(200)[4095] = 1;
  EXPECT_EQ(collect(t, v), (std::set<size_t>{3, 4, 200}));
  EXPECT_TRUE(collect(t, v).empty());  // reported once
  v.page(4)[1] = 2;                    // re-armed: written again, reported again
  EXPECT_EQ(collect(t, v), (std::set<size_t>{4}));
  // More runs than one scan's vector holds (every other page: 128 runs).
  std::set<size_t> every_other;
  for (size_t i = 0; i < v.pages; i += 2) {
    v.page(i)[7] = 1;
    every_other.insert(i);
  }
  EXPECT_EQ(collect(t, v), every_other);
  // The values written are there, in both views.
  EXPECT_EQ(v.svc[200 * kPage + 4095], 1);
  EXPECT_EQ(v.svc[4 * kPage + 1], 2);
}

TEST_P(WriteTrackerModes, ServiceViewWritesAreNotReported) {
  WriteTracker t;
  OPEN_OR_SKIP(t);
  TwoViews v(16);
  std::string error;
  ASSERT_TRUE(t.track(v.app, v.pages * kPage, &error)) << error;
  v.svc[5 * kPage] = 9;
  v.page(6)[0] = 9;
  EXPECT_EQ(collect(t, v), (std::set<size_t>{6}));
  EXPECT_EQ(v.page(5)[0], 9);  // visible in the application view all the same
}

TEST_P(WriteTrackerModes, MprotectRoundTripsKeepTracking) {
  WriteTracker t;
  OPEN_OR_SKIP(t);
  TwoViews v(16);
  std::string error;
  ASSERT_TRUE(t.track(v.app, v.pages * kPage, &error)) << error;
  // Armed, taken away and given back: a write is still reported.
  ASSERT_EQ(mprotect(v.page(1), kPage, PROT_NONE), 0);
  ASSERT_EQ(mprotect(v.page(1), kPage, PROT_READ | PROT_WRITE), 0);
  ASSERT_EQ(mprotect(v.page(2), kPage, PROT_READ), 0);
  ASSERT_EQ(mprotect(v.page(2), kPage, PROT_READ | PROT_WRITE), 0);
  v.page(1)[0] = 1;
  v.page(2)[0] = 1;
  // Written, then made read-only before the scan: still reported, and
  // re-armed so that a write after it is writable again is reported too.
  v.page(3)[0] = 1;
  ASSERT_EQ(mprotect(v.page(3), kPage, PROT_READ), 0);
  EXPECT_EQ(collect(t, v), (std::set<size_t>{1, 2, 3}));
  ASSERT_EQ(mprotect(v.page(3), kPage, PROT_READ | PROT_WRITE), 0);
  EXPECT_TRUE(collect(t, v).empty());
  v.page(3)[0] = 2;
  EXPECT_EQ(collect(t, v), (std::set<size_t>{3}));
}

TEST_P(WriteTrackerModes, UntrackedPagesAreNeverReported) {
  WriteTracker t;
  OPEN_OR_SKIP(t);
  TwoViews v(32);
  std::string error;
  ASSERT_TRUE(t.track(v.page(8), 8 * kPage, &error)) << error;  // pages 8..15 only
  for (size_t i = 0; i < v.pages; ++i) v.page(i)[0] = 1;
  EXPECT_EQ(collect(t, v, 8, 8), (std::set<size_t>{8, 9, 10, 11, 12, 13, 14, 15}));
  // A scan over memory that is not tracked is refused, not answered wrongly
  // (asynchronous mode: PAGEMAP_SCAN checks; the synchronous one reports
  // what its handler saw, which is nothing there).
  std::vector<WriteTracker::Run> runs;
  if (t.mode() == WriteTracker::Mode::Async)
    EXPECT_FALSE(t.collect(v.app, v.pages * kPage, &runs, &error));
  else
    EXPECT_TRUE(t.collect(v.app, v.pages * kPage, &runs, &error) && runs.empty());
  // Untracked: writes are no longer reported; tracked again: only new ones.
  ASSERT_TRUE(t.untrack(v.page(8), 4 * kPage, &error)) << error;
  v.page(9)[0] = 2;
  v.page(13)[0] = 2;
  EXPECT_EQ(collect(t, v, 12, 4), (std::set<size_t>{13}));
  ASSERT_TRUE(t.track(v.page(8), 4 * kPage, &error)) << error;
  EXPECT_TRUE(collect(t, v, 8, 8).empty());
  v.page(10)[0] = 3;
  EXPECT_EQ(collect(t, v, 8, 8), (std::set<size_t>{10}));
}

// What a free does (the runtime punches a hole in the memory file, zeroing
// both views): the pages written before it (not armed when their memory
// went) read as written once more, even untouched since, and are re-armed;
// the armed pages stay armed. So the runtime stops tracking freed runs, and
// tracking them again re-arms them.
TEST_P(WriteTrackerModes, WhatAFreeDoes) {
  WriteTracker t;
  OPEN_OR_SKIP(t);
  TwoViews v(8);
  std::string error;
  ASSERT_TRUE(t.track(v.app, v.pages * kPage, &error)) << error;
  v.page(1)[0] = 1;
  v.page(2)[0] = 1;
  ASSERT_EQ(fallocate(v.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)(v.pages * kPage)), 0);
  EXPECT_EQ(v.page(1)[0], 0);
  EXPECT_EQ(collect(t, v), (std::set<size_t>{1, 2}));
  EXPECT_TRUE(collect(t, v).empty());
  v.page(2)[0] = 5;
  v.page(6)[0] = 5;
  EXPECT_EQ(collect(t, v), (std::set<size_t>{2, 6}));
  // Re-arming right after the free (track again) leaves nothing to report.
  v.page(3)[0] = 1;
  ASSERT_EQ(fallocate(v.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)(v.pages * kPage)), 0);
  ASSERT_TRUE(t.track(v.app, v.pages * kPage, &error)) << error;
  EXPECT_TRUE(collect(t, v).empty());
}

// Writers racing with collections lose no write: every page written once
// while the main thread collects over and over is reported in all; then
// again after re-arming. A page may also be reported early, in either
// mode: its writer's fault has made it writable (the kernel, or the
// handler) but not yet stored when a collection re-arms it, and the store
// then faults again; collections in a tight loop, as here, can do that
// several times to one store (conservative: a notice too many, never one
// too few; the runtime collects once per interval).
TEST_P(WriteTrackerModes, ConcurrentWritesAreAllReportedOnce) {
  WriteTracker t;
  OPEN_OR_SKIP(t);
  TwoViews v(512);
  std::string error;
  ASSERT_TRUE(t.track(v.app, v.pages * kPage, &error)) << error;
  for (int round = 0; round < 2; ++round) {
    std::atomic<bool> done{false};
    std::thread writer([&] {
      for (size_t i = 0; i < v.pages; ++i) v.page((i * 7) % v.pages)[round] = 1;  // 7 is prime to 512
      done = true;
    });
    std::vector<size_t> reported;
    for (bool last = false; !last;) {
      last = done.load();
      std::vector<WriteTracker::Run> runs;
      ASSERT_TRUE(t.collect(v.app, v.pages * kPage, &runs, &error)) << error;
      for (const auto &r : runs)
        for (size_t i = 0; i < r.pages; ++i) reported.push_back((r.addr - (uintptr_t)v.app) / kPage + i);
    }
    writer.join();
    std::sort(reported.begin(), reported.end());
    reported.erase(std::unique(reported.begin(), reported.end()), reported.end());
    ASSERT_EQ(reported.size(), v.pages) << "round " << round;
    for (size_t i = 0; i < v.pages; ++i) ASSERT_EQ(reported[i], i) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Open, WriteTrackerModes, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) { return info.param ? "Sync" : "Auto"; });

// A process whose seccomp filter refuses userfaultfd (as containers may)
// gets an unavailable tracker that says why; its calls fail cleanly.
TEST(WriteTracker, UnavailableWithReasonUnderSeccomp) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{(unsigned short)(sizeof filter / sizeof filter[0]), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) _exit(2);
    WriteTracker t;
    std::string why, error;
    if (t.open(&why) || t.available()) _exit(3);
    if (why.find("userfaultfd") == std::string::npos) _exit(4);
    char page[kPage];
    std::vector<WriteTracker::Run> runs;
    if (t.track(page, kPage, &error) || t.collect(page, kPage, &runs, &error) || !runs.empty()) _exit(5);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
