// fork(): the global range is mapped MAP_SHARED, so without this a child
// would share it with the job (its stores appearing on every rank) and
// would wait forever on a protocol that does not know it.
//
// Two treatments. By default (the API's programs) the child gets no global
// memory: the application view becomes inaccessible, and a fault there
// says so. In program mode the program's globals, stacks and heap are
// global memory, so a child left without it could not even return from
// fork(): there every mapping of global memory (the application view and
// the executable's windows) becomes private memory holding a copy of what
// this rank could read at the fork (written freely by the child, never seen
// by the job); what the rank did not hold stays inaccessible.
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "platform/platform.h"

namespace agora::platform {

namespace {
void (*g_child_hook)() = nullptr;
int g_memory_fd = -1;             // the global memory object, closed in a child
int g_pool_fd = -1;               // the cache's frame pool, likewise
std::byte *g_app_view = nullptr;  // the application view, replaced in a child
size_t g_app_size = 0;
bool g_registered = false;
bool g_copies = false;  // program mode: the child keeps copies (above)
bool g_child_has_copies = false;
struct Window {
  uintptr_t lo, hi;
};
Window g_windows[8];  // program mode's windows of the executable
int g_window_count = 0;

void inaccessible(uintptr_t lo, uintptr_t hi) {
  if (hi > lo)
    (void)mmap((void *)lo, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

// [lo, hi) becomes private memory with the bytes it shows now. If it maps
// `fd` at `offset` (fd >= 0), only the file's data is copied: its holes
// (pages never written: most of a rank's heap) read as zero anyway, and
// copying them would commit memory the parent never used.
void copied(uintptr_t lo, uintptr_t hi, int fd, uint64_t offset) {
  const size_t len = hi - lo;
  void *tmp = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (tmp == MAP_FAILED) {
    inaccessible(lo, hi);
    return;
  }
  if (fd < 0) {
    std::memcpy(tmp, (const void *)lo, len);
  } else {
    const off_t end = (off_t)(offset + len);
    for (off_t data = (off_t)offset; data < end;) {
      data = lseek(fd, data, SEEK_DATA);
      if (data < 0 || data >= end) break;  // ENXIO: no data up to the end of the file
      off_t hole = lseek(fd, data, SEEK_HOLE);
      if (hole < 0 || hole > end) hole = end;
      std::memcpy((std::byte *)tmp + (data - (off_t)offset), (const void *)(lo + (uintptr_t)(data - (off_t)offset)),
                  (size_t)(hole - data));
      data = hole;
    }
  }
  if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)lo) == MAP_FAILED) {
    munmap(tmp, len);
    inaccessible(lo, hi);
  }
}

uintptr_t parse_hex(const char **at, const char *end) {
  uintptr_t v = 0;
  for (; *at < end; ++*at) {
    char c = **at;
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) break;
    v = v << 4 | (uintptr_t)d;
  }
  return v;
}

// A new open file description of descriptor fd (-1 if none).
int reopen(int fd) {
  if (fd < 0) return -1;
  char path[32] = "/proc/self/fd/";
  char digits[12];
  int n = 0;
  for (int v = fd; n == 0 || v > 0; v /= 10) digits[n++] = (char)('0' + v % 10);
  size_t at = std::strlen(path);
  while (n > 0) path[at++] = digits[--n];
  path[at] = 0;
  return open(path, O_RDONLY | O_CLOEXEC);
}

// The mappings of global memory in this (child) process, from
// /proc/self/maps, replaced by copies or inaccessible memory. No malloc:
// a fork() child of a multithreaded process may not. Read whole before any
// change, into lazily committed buffers.
void *privatise(void *) {
  const size_t cap = (size_t)256 << 20;
  char *text = (char *)mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  size_t used = 0;
  if (text != MAP_FAILED && fd >= 0)
    for (ssize_t n; used < cap && (n = read(fd, text + used, cap - used)) > 0;) used += (size_t)n;
  if (fd >= 0) close(fd);
  if (text == MAP_FAILED || used == 0 || used == cap) {  // cannot tell what is readable: nothing is
    inaccessible((uintptr_t)g_app_view, (uintptr_t)g_app_view + g_app_size);
    for (int i = 0; i < g_window_count; ++i) inaccessible(g_windows[i].lo, g_windows[i].hi);
    if (text != MAP_FAILED) munmap(text, cap);
    return nullptr;
  }
  struct Segment {
    uintptr_t lo, hi;
    bool readable;
    int fd;  // the memory object or pool it maps, if known (copied() skips holes)
    uint64_t offset;
  };
  // Own descriptions of the two objects: lseek on the inherited ones would
  // move the parent's file offset.
  const int memory_fd = reopen(g_memory_fd), pool_fd = reopen(g_pool_fd);
  struct stat st;
  const ino_t memory_inode = memory_fd >= 0 && fstat(memory_fd, &st) == 0 ? st.st_ino : 0;
  const ino_t pool_inode = pool_fd >= 0 && fstat(pool_fd, &st) == 0 ? st.st_ino : 0;
  auto *segments =
      (Segment *)mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  size_t count = 0;
  const Window view{(uintptr_t)g_app_view, (uintptr_t)g_app_view + g_app_size};
  for (const char *at = text, *end = text + used; at < end && segments != MAP_FAILED;) {
    const char *eol = (const char *)std::memchr(at, '\n', (size_t)(end - at));
    if (!eol) eol = end;
    uintptr_t lo = parse_hex(&at, eol);
    if (at < eol && *at == '-') ++at;
    uintptr_t hi = parse_hex(&at, eol);
    bool readable = at + 1 < eol && at[1] == 'r';
    // "perms offset dev inode path": the offset, then the inode.
    while (at < eol && *at != ' ') ++at;
    while (at < eol && *at == ' ') ++at;
    while (at < eol && *at != ' ') ++at;  // perms
    while (at < eol && *at == ' ') ++at;
    const uint64_t file_offset = parse_hex(&at, eol);
    while (at < eol && *at == ' ') ++at;
    while (at < eol && *at != ' ') ++at;  // dev
    while (at < eol && *at == ' ') ++at;
    uint64_t inode = 0;
    for (; at < eol && *at >= '0' && *at <= '9'; ++at) inode = inode * 10 + (uint64_t)(*at - '0');
    const int fd = inode && inode == memory_inode ? memory_fd : inode && inode == pool_inode ? pool_fd : -1;
    at = eol + 1;
    for (int i = -1; i < g_window_count; ++i) {
      const Window &w = i < 0 ? view : g_windows[i];
      uintptr_t a = lo > w.lo ? lo : w.lo, b = hi < w.hi ? hi : w.hi;
      if (a >= b || (count + 1) * sizeof(Segment) > cap) continue;
      if (count && !readable && !segments[count - 1].readable && segments[count - 1].hi == a)
        segments[count - 1].hi = b;  // one mapping for a run of inaccessible ones
      else
        segments[count++] = Segment{a, b, readable, fd, file_offset + (a - lo)};
    }
  }
  for (size_t i = 0; i < count; ++i)
    if (segments[i].readable)
      copied(segments[i].lo, segments[i].hi, segments[i].fd, segments[i].offset);
    else
      inaccessible(segments[i].lo, segments[i].hi);
  if (segments != MAP_FAILED) munmap(segments, cap);
  if (memory_fd >= 0) close(memory_fd);
  if (pool_fd >= 0) close(pool_fd);
  munmap(text, cap);
  return nullptr;
}

void in_child() {
  // The child holding the descriptor would keep the job's memory alive
  // after the job ends.
  // The application view is not MADV_DONTFORK (the frame pool maps slots
  // into it, and a mapping made later would not inherit the flag, nor merge
  // with neighbours that have it): a child replaces it with no memory, or
  // in program mode with copies. That runs on a stack of its own: the
  // forking thread's may be global memory, replaced meanwhile.
  if (g_app_view && g_copies) {
    const size_t bytes = (size_t)256 << 10;
    void *stack = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack != MAP_FAILED) {
      call_on_stack(privatise, nullptr, (std::byte *)stack + bytes);
      munmap(stack, bytes);
      g_child_has_copies = true;
    } else {  // nothing better to do in the child if this fails
      inaccessible((uintptr_t)g_app_view, (uintptr_t)g_app_view + g_app_size);
      for (int i = 0; i < g_window_count; ++i) inaccessible(g_windows[i].lo, g_windows[i].hi);
    }
  } else if (g_app_view) {
    inaccessible((uintptr_t)g_app_view, (uintptr_t)g_app_view + g_app_size);
  }
  g_app_view = nullptr;
  g_window_count = 0;
  if (g_memory_fd >= 0) close(g_memory_fd);
  if (g_pool_fd >= 0) close(g_pool_fd);
  g_memory_fd = g_pool_fd = -1;
  if (g_child_hook) g_child_hook();
}
}  // namespace

bool vm_exclude_from_fork(const GlobalRange &range, std::string *error) {
  if (madvise(range.service_view, range.size, MADV_DONTFORK) != 0) {
    *error = std::string("cannot keep global memory out of fork() children (madvise): ") + system_error_text(errno);
    return false;
  }
  g_app_view = range.app_view;
  g_app_size = range.size;
  g_memory_fd = range.fd;
  return true;
}

bool vm_exclude_pool_from_fork(const FramePool &pool, std::string *error) {
  if (madvise(pool.view, pool.slots * pool.page, MADV_DONTFORK) != 0) {
    *error =
        std::string("cannot keep the cache's frames out of fork() children (madvise): ") + system_error_text(errno);
    return false;
  }
  g_pool_fd = pool.fd;
  return true;
}

void fork_copy_window(uintptr_t lo, size_t len) {
  g_copies = true;
  if (g_window_count < (int)(sizeof g_windows / sizeof g_windows[0]))
    g_windows[g_window_count++] = Window{lo, lo + len};
}

bool fork_child_has_copies() { return g_child_has_copies; }

bool fork_child_hook_install(void (*child)(), std::string *error) {
  g_child_hook = child;
  if (!child) {
    g_memory_fd = g_pool_fd = -1;
    g_app_view = nullptr;
    g_copies = false;
    g_window_count = 0;
  }
  if (g_registered || !child) return true;
  int rc = pthread_atfork(nullptr, nullptr, in_child);
  if (rc != 0) {
    *error = std::string("pthread_atfork failed: ") + system_error_text(rc);
    return false;
  }
  g_registered = true;
  return true;
}

}  // namespace agora::platform
