// The bounded cache's frame pool (platform.h, docs/cache.md). Giving an
// evicted copy's memory back (a hole punched in the memory file) and having
// the kernel allocate and zero a page for the next copy costs ~3 us a page
// (bench/cache/frame_cost.c); mapping a slot that stays allocated over the
// page's place, and the memory file back at eviction, costs ~0.5 us.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "platform/platform.h"

namespace agora::platform {

namespace {
int prot_of(Access access) {
  return access == Access::None ? PROT_NONE : access == Access::Read ? PROT_READ : PROT_READ | PROT_WRITE;
}
}  // namespace

bool frame_pool_open(size_t slots, size_t page, FramePool *out, std::string *error) {
  if (slots == 0 || page == 0 || slots > SIZE_MAX / page) {
    *error = "frame pool: bad size";
    return false;
  }
  const size_t bytes = slots * page;
  int fd = memfd_create("agora-frames", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
    *error =
        std::string("frame pool: cannot make a memory file of ") + human_bytes(bytes) + ": " + system_error_text(errno);
    if (fd >= 0) close(fd);
    return false;
  }
  void *view = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (view == MAP_FAILED) {
    *error = std::string("frame pool: cannot map ") + human_bytes(bytes) + ": " + system_error_text(errno);
    close(fd);
    return false;
  }
  out->view = (std::byte *)view;
  out->slots = slots;
  out->page = page;
  out->fd = fd;
  return true;
}

void frame_pool_close(FramePool *pool) {
  if (!pool->view) return;
  munmap(pool->view, pool->slots * pool->page);
  close(pool->fd);
  *pool = FramePool{};
}

bool frame_pool_map(const FramePool &pool, void *addr, size_t first_slot, size_t count, Access access) {
  if (first_slot > pool.slots || count > pool.slots - first_slot) {
    errno = EINVAL;
    return false;
  }
  // Not MADV_DONTFORK: a fork() child replaces the whole application view
  // (fork_linux.cpp), and one system call per run is what the pool saves.
  return mmap(addr, count * pool.page, prot_of(access), MAP_SHARED | MAP_FIXED | MAP_NORESERVE, pool.fd,
              (off_t)(first_slot * pool.page)) != MAP_FAILED;
}

bool vm_map_back(const GlobalRange &range, void *addr, size_t len, uint64_t offset) {
  // The flags the neighbours have (vm_reserve's for the range, vm_map_window's
  // for a program window), so that the kernel merges the mappings again.
  const bool in_range = (std::byte *)addr >= range.app_view && (std::byte *)addr < range.app_view + range.size;
  const int flags = MAP_SHARED | MAP_FIXED | (in_range ? MAP_NORESERVE : 0);
  return mmap(addr, len, PROT_NONE, flags, range.fd, (off_t)offset) != MAP_FAILED;
}

}  // namespace agora::platform
