#include "platform/write_tracker_linux.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "common/log.h"

// The ABI of Linux 6.7+ that older headers (Debian 12's are 6.1) lack.
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef PAGEMAP_SCAN
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGE_IS_WRITTEN (1 << 1)
struct page_region {
  __u64 start, end, categories;
};
struct pm_scan_arg {
  __u64 size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted, category_mask,
      category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

namespace agora::platform {

namespace {
constexpr size_t kPage = 4096;
std::string errno_text(const char *what) { return std::string(what) + ": " + system_error_text(errno); }

// Adds a written run, joining it to the last when they touch (a scan's
// vector filled mid-run, or runs of pages re-armed one after another).
void append_run(std::vector<WriteTracker::Run> *written, uintptr_t start, size_t pages) {
  if (!written->empty() && written->back().addr + written->back().pages * kPage == start)
    written->back().pages += pages;
  else
    written->push_back({start, pages});
}
}  // namespace

bool WriteTracker::write_protect(uintptr_t start, size_t len, bool arm) {
  uffdio_writeprotect wp{};
  wp.range.start = start;
  wp.range.len = len;
  wp.mode = arm ? UFFDIO_WRITEPROTECT_MODE_WP : 0;
  return ioctl(uffd_, UFFDIO_WRITEPROTECT, &wp) == 0;
}

WriteTracker::~WriteTracker() { close(); }

void WriteTracker::close() {
  if (handler_.joinable()) {
    const uint64_t one = 1;
    if (write(stop_fd_, &one, sizeof one) != (ssize_t)sizeof one) {
      // Cannot happen with an eventfd below its maximum; the handler would
      // then block forever, so do not wait for it.
      handler_.detach();
    } else {
      handler_.join();
    }
  }
  if (stop_fd_ >= 0) ::close(stop_fd_);
  if (uffd_ >= 0) ::close(uffd_);
  if (pagemap_ >= 0) ::close(pagemap_);
  uffd_ = pagemap_ = stop_fd_ = -1;
  sync_ = false;
  written_.clear();
  whole_start_ = 0;
  whole_len_ = 0;
}

bool WriteTracker::open(std::string *why, bool sync_only) {
  std::string async_why;
  if (!sync_only && open_mode(false, &async_why)) return true;
  if (open_mode(true, why)) return true;
  if (!sync_only) *why = async_why + "; " + *why;
  return false;
}

bool WriteTracker::open_mode(bool sync, std::string *why) {
  close();
  // User-mode-only faults are what an unprivileged process may ask for
  // (vm.unprivileged_userfaultfd=0); write-protect faults are user-mode anyway.
  int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
  if (uffd < 0) {
    *why = errno_text("userfaultfd");
    return false;
  }
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = sync ? UFFD_FEATURE_WP_HUGETLBFS_SHMEM
                      : UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_HUGETLBFS_SHMEM | UFFD_FEATURE_WP_UNPOPULATED;
  if (ioctl(uffd, UFFDIO_API, &api) != 0) {
    *why = errno_text(sync ? "userfaultfd write-protect of shared memory (UFFDIO_API, Linux 5.19+)"
                           : "userfaultfd asynchronous write-protect (UFFDIO_API, Linux 6.7+)");
    ::close(uffd);
    return false;
  }
  uffd_ = uffd;
  if (sync) {
    sync_ = true;
    stop_fd_ = eventfd(0, EFD_CLOEXEC);
    if (stop_fd_ < 0) {
      *why = errno_text("eventfd");
      close();
      return false;
    }
    try {
      handler_ = std::thread([this] { resolve_faults(); });
    } catch (const std::exception &e) {
      *why = std::string("cannot start the write tracker's thread: ") + e.what();
      close();
      return false;
    }
  } else {
    pagemap_ = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pagemap_ < 0) {
      *why = errno_text("open /proc/self/pagemap");
      close();
      return false;
    }
  }
  if (!probe(why)) {
    close();
    return false;
  }
  return true;
}

void WriteTracker::resolve_faults() {
  // Signals are for the application's threads and the runtime's.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  for (;;) {
    pollfd fds[2] = {{uffd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;  // EINTR
    if (fds[1].revents) return;
    uffd_msg msgs[32];
    const ssize_t n = read(uffd_, msgs, sizeof msgs);
    if (n <= 0) continue;  // EAGAIN: another wake-up took it
    std::lock_guard<std::mutex> g(written_mutex_);
    for (size_t i = 0; i < (size_t)n / sizeof msgs[0]; ++i) {
      if (msgs[i].event != UFFD_EVENT_PAGEFAULT) continue;
      const uintptr_t page = (uintptr_t)msgs[i].arg.pagefault.address & ~(uintptr_t)(kPage - 1);
      // Recorded, then writable (which wakes the writer) until collect re-arms it.
      written_.push_back(page);
      if (!write_protect(page, kPage, false)) {
        // Unregistered meanwhile (untracked, remapped): wake the writer,
        // whose retry no longer faults here.
        uffdio_range range{page, kPage};
        ioctl(uffd_, UFFDIO_WAKE, &range);
      }
    }
  }
}

// The whole round on a scratch memfd: arm, write one page, scan (exactly
// that page), scan again (nothing). Catches a kernel that accepts the
// features but lacks PAGEMAP_SCAN, or a filter that blocks one ioctl.
bool WriteTracker::probe(std::string *why) {
  const size_t pages = 4, len = pages * kPage;
  int fd = memfd_create("agora-write-probe", MFD_CLOEXEC);
  if (fd < 0) {
    *why = errno_text("memfd_create (probe)");
    return false;
  }
  void *mem = MAP_FAILED;
  if (ftruncate(fd, (off_t)len) == 0) mem = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mem == MAP_FAILED) {
    *why = errno_text("probe mapping");
    return false;
  }
  bool ok = false;
  std::vector<Run> first, second;
  // Each empty branch is a step that failed and set *why.
  if (!track(mem, len, why)) {  // NOLINT(bugprone-branch-clone)
  } else if (((volatile char *)mem)[kPage] = 1, !collect(mem, len, &first, why)) {
  } else if (!collect(mem, len, &second, why)) {
  } else if (first.size() != 1 || first[0].addr != (uintptr_t)mem + kPage || first[0].pages != 1 || !second.empty()) {
    *why = "the kernel's report of written pages is not what was written (probe)";
  } else {
    ok = true;
  }
  std::string ignored;
  untrack(mem, len, &ignored);
  munmap(mem, len);
  return ok;
}

bool WriteTracker::track(void *addr, size_t len, std::string *error) {
  if (uffd_ < 0) {
    *error = "write tracking is not available";
    return false;
  }
  if (!inside_whole(addr, len) && !register_range(addr, len, error)) return false;
  std::unique_lock<std::mutex> g(written_mutex_, std::defer_lock);
  if (sync_) {  // armed: nothing written there since, as PAGEMAP_SCAN would say
    g.lock();
    forget_written((uintptr_t)addr, (uintptr_t)addr + len);
  }
  if (!write_protect((uintptr_t)addr, len, true)) {
    *error = errno_text("UFFDIO_WRITEPROTECT");
    return false;
  }
  return true;
}

void WriteTracker::forget_written(uintptr_t lo, uintptr_t hi) {
  written_.erase(std::remove_if(written_.begin(), written_.end(), [&](uintptr_t p) { return p >= lo && p < hi; }),
                 written_.end());
}

bool WriteTracker::register_range(void *addr, size_t len, std::string *error) {
  uffdio_register reg{};
  reg.range.start = (uintptr_t)addr;
  reg.range.len = len;
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  if (ioctl(uffd_, UFFDIO_REGISTER, &reg) != 0) {
    *error = errno_text("UFFDIO_REGISTER");
    return false;
  }
  return true;
}

bool WriteTracker::register_whole(void *addr, size_t len, std::string *error) {
  if (uffd_ < 0) return true;
  if (!register_range(addr, len, error)) return false;
  whole_start_ = (uintptr_t)addr;
  whole_len_ = len;
  return true;
}

bool WriteTracker::register_again(void *addr, size_t len, std::string *error) {
  return uffd_ < 0 || !inside_whole(addr, len) || register_range(addr, len, error);
}

bool WriteTracker::untrack(void *addr, size_t len, std::string *error) {
  if (uffd_ < 0) return true;
  if (sync_) {  // what the handler recorded there is no longer asked for
    std::lock_guard<std::mutex> g(written_mutex_);
    forget_written((uintptr_t)addr, (uintptr_t)addr + len);
  }
  if (inside_whole(addr, len)) {  // disarm, keep the registration (no split)
    if (!write_protect((uintptr_t)addr, len, false)) {
      *error = errno_text("UFFDIO_WRITEPROTECT (disarm)");
      return false;
    }
    return true;
  }
  uffdio_range range{};
  range.start = (uintptr_t)addr;
  range.len = len;
  if (ioctl(uffd_, UFFDIO_UNREGISTER, &range) != 0) {
    *error = errno_text("UFFDIO_UNREGISTER");
    return false;
  }
  return true;
}

bool WriteTracker::collect_sync(void *addr, size_t len, std::vector<Run> *written, std::string *error) {
  // Under the handler's lock: a write that faults meanwhile waits, and is
  // recorded for the next call after the pages reported are armed again.
  const uintptr_t lo = (uintptr_t)addr, hi = lo + len;
  std::lock_guard<std::mutex> g(written_mutex_);
  auto mine = std::partition(written_.begin(), written_.end(), [&](uintptr_t p) { return p < lo || p >= hi; });
  std::vector<uintptr_t> pages(mine, written_.end());
  written_.erase(mine, written_.end());
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  for (size_t i = 0; i < pages.size();) {
    size_t j = i + 1;
    while (j < pages.size() && pages[j] == pages[j - 1] + kPage) ++j;
    if (!write_protect(pages[i], (j - i) * kPage, true)) {
      *error = errno_text("UFFDIO_WRITEPROTECT (re-arm)");
      return false;
    }
    append_run(written, pages[i], j - i);
    i = j;
  }
  return true;
}

bool WriteTracker::collect(void *addr, size_t len, std::vector<Run> *written, std::string *error) {
  if (uffd_ < 0) {
    *error = "write tracking is not available";
    return false;
  }
  if (sync_) return collect_sync(addr, len, written, error);
  page_region regions[64];
  pm_scan_arg arg{};
  arg.size = sizeof arg;
  arg.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC;  // report written pages and re-arm them
  arg.start = (uintptr_t)addr;
  arg.end = (uintptr_t)addr + len;
  arg.vec = (uintptr_t)regions;
  arg.vec_len = sizeof regions / sizeof regions[0];
  arg.category_mask = PAGE_IS_WRITTEN;
  arg.return_mask = PAGE_IS_WRITTEN;
  for (;;) {
    long n = ioctl(pagemap_, PAGEMAP_SCAN, &arg);
    if (n < 0) {
      *error = errno_text("PAGEMAP_SCAN");
      return false;
    }
    for (long i = 0; i < n; ++i) {
      append_run(written, regions[i].start, (regions[i].end - regions[i].start) / kPage);
    }
    // The walk stops early only when the vector is full.
    if (arg.walk_end >= arg.end || n == 0) break;
    arg.start = arg.walk_end;
  }
  return true;
}

}  // namespace agora::platform
