// Which pages of a shared mapping this process wrote, without a trap per
// page: userfaultfd write-protect in asynchronous mode (the kernel resolves a
// write to an armed page itself, ~0.8 us, and records it) read back and
// re-armed atomically by the PAGEMAP_SCAN ioctl of /proc/self/pagemap
// (Linux 6.7+). Only writes through the tracked mapping count: a write
// through another mapping of the same memory (the service view) is not
// reported. mprotect leaves a page's armed state alone.
//
// Kernels before 6.7 (Debian 12's 6.1) lack the asynchronous mode and
// PAGEMAP_SCAN; from 5.19 they have userfaultfd write-protect of shared
// memory in synchronous mode: a write to an armed page stops the writer
// until a handler resolves it. There a thread of the tracker's own resolves
// each such fault (it records the page and disarms it), and collect()
// re-arms what it reports under the handler's lock, so that a write racing
// with it is reported now or by the next call (or both: a writer woken but
// not yet stored when its page is re-armed faults again). Unlike
// mprotect, neither mode splits the mapping page by page (vm.max_map_count,
// docs/cache.md).
//
// open() probes the whole mechanism on a scratch mapping; if any step fails
// (an older kernel, seccomp, no permission) the tracker is unavailable and
// says why, and callers keep write-protect traps.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace agora::platform {

class WriteTracker {
 public:
  WriteTracker() = default;
  ~WriteTracker();
  WriteTracker(const WriteTracker &) = delete;
  WriteTracker &operator=(const WriteTracker &) = delete;

  enum class Mode { Async, Sync };
  // True if tracking works here; otherwise *why says what failed. Tries
  // the asynchronous mode, then the synchronous one; `sync_only`: only the
  // latter (to use it on a kernel that has both: tests, AGORA_HOME_WRITES=sync).
  bool open(std::string *why, bool sync_only = false);
  bool available() const { return uffd_ >= 0; }
  Mode mode() const { return sync_ ? Mode::Sync : Mode::Async; }
  void close();

  // Starts tracking [addr, addr+len) (page aligned, inside MAP_SHARED
  // mappings of shmem/memfd): registers it and arms every page, so a later
  // write is reported. Tracking a range again re-arms it.
  bool track(void *addr, size_t len, std::string *error);
  // Stops tracking [addr, addr+len): its pages are no longer reported.
  bool untrack(void *addr, size_t len, std::string *error);
  // Registers all of [addr, addr+len) at once, arming nothing: tracking a
  // part of it later only arms pages, and untracking disarms them, so the
  // mapping is never split page by page (each registered stretch apart from
  // its neighbours is a mapping of its own, vm.max_map_count; docs/cache.md).
  bool register_whole(void *addr, size_t len, std::string *error);
  // [addr, addr+len) inside the whole was mapped anew (the cache's frame
  // pool maps the memory back over an evicted copy): a new mapping is not
  // registered, so register it again, arming nothing. No-op outside it.
  bool register_again(void *addr, size_t len, std::string *error);

  struct Run {
    uintptr_t addr;  // page aligned
    size_t pages;
  };
  // Appends the pages of [addr, addr+len) (a tracked range) written since
  // they were last reported, as runs in address order, and re-arms them. A
  // write racing with the call is reported now or by the next call.
  bool collect(void *addr, size_t len, std::vector<Run> *written, std::string *error);

 private:
  bool probe(std::string *why);
  bool open_mode(bool sync, std::string *why);
  bool register_range(void *addr, size_t len, std::string *error);  // UFFDIO_REGISTER for write-protect
  bool write_protect(uintptr_t start, size_t len, bool arm);        // UFFDIO_WRITEPROTECT, arming or not
  bool collect_sync(void *addr, size_t len, std::vector<Run> *written, std::string *error);
  void resolve_faults();                            // the synchronous mode's handler thread
  void forget_written(uintptr_t lo, uintptr_t hi);  // written_mutex_ held
  bool inside_whole(void *addr, size_t len) const {
    return whole_len_ && (uintptr_t)addr >= whole_start_ && (uintptr_t)addr + len <= whole_start_ + whole_len_;
  }
  int uffd_ = -1;
  uintptr_t whole_start_ = 0;
  size_t whole_len_ = 0;
  int pagemap_ = -1;
  // The synchronous mode: the handler, what it has seen written since the
  // last collect (page addresses), and how to stop it.
  bool sync_ = false;
  std::thread handler_;
  std::mutex written_mutex_;
  std::vector<uintptr_t> written_;
  int stop_fd_ = -1;
};

}  // namespace agora::platform
