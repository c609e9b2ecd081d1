// System calls whose buffer is global memory (contract in platform.h).
//
// This file is linked into every program as an object (src/CMakeLists.txt),
// so its read, write, fread, ... are the program's: calls from the program
// and from shared libraries that call through the PLT land here. libc's own
// internal calls do not (fread and fwrite call the read and write system
// calls directly), which is why fread and fwrite are wrapped themselves.
//
// Method: bounce. A call on global memory runs on a private buffer and the
// bytes are copied into (after) or out of (before) global memory with memcpy.
// Those loads and stores fault like the program's own, so every protocol
// keeps its semantics: there is no window between "make the page
// accessible" and "the kernel copies" in which another rank could take the
// page away again (which touching the pages first would have under sc), and
// no partial result to mend. Each call stays one system call, on the same
// descriptor with the same flags and lengths, and returns what it returned,
// with its errno (fread and fwrite move at most 1 MiB per step, holding the
// stream's lock throughout, which stdio semantics allow).
#undef _FORTIFY_SOURCE  // these are the definitions, not the fortified inline callers
#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "platform/platform.h"
#include "platform/range_list.h"

extern "C" {
// Declared by glibc's headers only under _FORTIFY_SOURCE.
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t offset, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, sockaddr *addr, socklen_t *addr_len);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp);
size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp);
[[noreturn]] void __chk_fail(void);
}

namespace agora::platform {
namespace {

// Bounce buffers come from libc's heap, found by name: a program built with
// agoracc has its malloc & co routed to global memory by `ld --wrap`, which
// also rewrites this object's calls (a bounce buffer must stay private).
void *private_aligned_alloc(size_t alignment, size_t bytes) {
  static auto fn = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
  return fn ? fn(alignment, bytes) : nullptr;
}
void private_free(void *p) {
  static auto fn = (void (*)(void *))dlsym(RTLD_NEXT, "free");
  if (p && fn) fn(p);
}

std::atomic<uintptr_t> g_lo{0}, g_hi{0};
std::atomic<RangeUsable> g_usable{nullptr};

RangeList g_windows;  // program mode's windows (global_io_add_range)

// The one check every call pays.
inline bool touches_global(const void *buf, size_t n) {
  uintptr_t a = (uintptr_t)buf, lo = g_lo.load(std::memory_order_relaxed), hi = g_hi.load(std::memory_order_relaxed);
  return range_overlaps(a, n, lo, hi) || g_windows.overlaps(a, n);
}

bool usable(const void *buf, size_t n) {
  RangeUsable check = g_usable.load(std::memory_order_acquire);
  return check && check((uintptr_t)buf, n);
}

// libc's definitions of the functions this file replaces: found by a
// constructor, so that none is looked up later inside a signal handler
// (the fault handler's messages go through write()); looked up on first
// use if a call comes before the constructor runs.
// Kept as written: clang-format reflows this X-macro list differently on every run.
// clang-format off
#define AGORA_WRAPPED_CALLS(X)                                                                    \
  X(read) X(__read_chk) X(write) X(pread) X(pread64) X(__pread_chk) X(__pread64_chk) X(pwrite)    \
  X(pwrite64) X(readv) X(writev) X(preadv) X(pwritev) X(preadv64) X(pwritev64) X(preadv2)         \
  X(pwritev2) X(preadv64v2) X(pwritev64v2) X(recv) X(__recv_chk) X(recvfrom) X(__recvfrom_chk)    \
  X(recvmsg) X(send) X(sendto) X(sendmsg) X(fread) X(fread_unlocked) X(__fread_chk)               \
  X(__fread_unlocked_chk) X(fwrite) X(fwrite_unlocked)
// clang-format on

#define AGORA_LIBC_SLOT(name) std::atomic<void *> libc_##name{nullptr};
AGORA_WRAPPED_CALLS(AGORA_LIBC_SLOT)

template <typename Fn>
Fn resolve(std::atomic<void *> &slot, const char *name) {
  void *fn = slot.load(std::memory_order_relaxed);
  if (!fn) {
    fn = dlsym(RTLD_NEXT, name);
    if (!fn) {
      static const char msg[] = "agora: cannot find libc's definition of a wrapped call\n";
      ssize_t ignored = syscall(SYS_write, 2, msg, sizeof msg - 1);
      (void)ignored;
      std::abort();
    }
    slot.store(fn, std::memory_order_relaxed);
  }
  return (Fn)fn;
}
#define LIBC(name) ::agora::platform::resolve<decltype(&::name)>(::agora::platform::libc_##name, #name)

__attribute__((constructor)) void resolve_all() {
#define AGORA_LIBC_RESOLVE(name) (void)LIBC(name);
  AGORA_WRAPPED_CALLS(AGORA_LIBC_RESOLVE)
}

// Private memory for one call, at the same offset within its page as the
// global buffer `like`, so alignment rules (O_DIRECT) hold for it exactly as
// for the buffer it stands in for. On the stack when small.
class Bounce {
 public:
  Bounce(size_t n, const void *like) {
    size_t offset = (uintptr_t)like % kPageSize;
    if (offset + n <= sizeof small_) {
      data_ = small_ + offset;
    } else if (n <= SIZE_MAX - 2 * kPageSize) {
      heap_ = (char *)private_aligned_alloc(kPageSize, (offset + n + kPageSize - 1) / kPageSize * kPageSize);
      data_ = heap_ ? heap_ + offset : nullptr;
    }
  }
  ~Bounce() { private_free(heap_); }
  Bounce(const Bounce &) = delete;
  Bounce &operator=(const Bounce &) = delete;
  char *data() const { return data_; }

 private:
  alignas(kPageSize) char small_[kPageSize];
  char *heap_ = nullptr;
  char *data_ = nullptr;
};

// call(private) fills up to n bytes, then the result moves into buf.
template <typename Call>
ssize_t bounce_in(void *buf, size_t n, Call call) {
  Bounce tmp(n, buf);
  if (!tmp.data()) {
    errno = ENOMEM;
    return -1;
  }
  ssize_t got = call(tmp.data());
  int saved = errno;
  if (got > 0) std::memcpy(buf, tmp.data(), (size_t)got);
  errno = saved;
  return got;
}

// buf's n bytes move to private memory, then call(private) sends them.
template <typename Call>
ssize_t bounce_out(const void *buf, size_t n, Call call) {
  Bounce tmp(n, buf);
  if (!tmp.data()) {
    errno = ENOMEM;
    return -1;
  }
  std::memcpy(tmp.data(), buf, n);
  return call((const void *)tmp.data());
}

// Vectors: the global segments are replaced by pieces of one private
// buffer, the others passed as they are.
struct IovecBounce {
  enum Plan { Direct, Bounce, NoMemory };
  iovec *iov = nullptr;  // the vector to pass
  char *data = nullptr;  // private bytes of the global segments
  // Direct: no usable global segment, or arguments the kernel will refuse.
  Plan prepare(const iovec *in, int count) {
    if (count <= 0 || count > IOV_MAX) return Direct;
    size_t global_bytes = 0;
    bool any = false;
    for (int i = 0; i < count; ++i) {
      if (!touches_global(in[i].iov_base, in[i].iov_len)) continue;
      if (!usable(in[i].iov_base, in[i].iov_len)) return Direct;
      if (in[i].iov_len > SIZE_MAX / 2 - global_bytes) return Direct;  // the kernel says EINVAL
      global_bytes += in[i].iov_len;
      any = true;
    }
    if (!any) return Direct;
    // Each piece keeps its segment's offset within a page (alignment rules
    // hold as for the segment): at most a page of padding per segment.
    size_t bytes = (global_bytes + 2 * kPageSize * (size_t)count + kPageSize - 1) / kPageSize * kPageSize;
    iov = (iovec *)private_aligned_alloc(alignof(std::max_align_t), sizeof(iovec) * count);
    data = (char *)private_aligned_alloc(kPageSize, bytes);
    if (!iov || !data) return NoMemory;
    size_t at = 0;
    for (int i = 0; i < count; ++i) {
      iov[i] = in[i];
      if (!touches_global(in[i].iov_base, in[i].iov_len)) continue;
      at = (at + kPageSize - 1) / kPageSize * kPageSize + (uintptr_t)in[i].iov_base % kPageSize;
      iov[i].iov_base = data + at;
      at += in[i].iov_len;
    }
    return Bounce;
  }
  void gather(const iovec *in, int count) {  // global -> private
    for (int i = 0; i < count; ++i)
      if (iov[i].iov_base != in[i].iov_base) std::memcpy(iov[i].iov_base, in[i].iov_base, in[i].iov_len);
  }
  void scatter(const iovec *in, int count, size_t got) {  // first `got` bytes: private -> global
    for (int i = 0; i < count && got > 0; ++i) {
      size_t n = in[i].iov_len < got ? in[i].iov_len : got;
      if (iov[i].iov_base != in[i].iov_base) std::memcpy(in[i].iov_base, iov[i].iov_base, n);
      got -= n;
    }
  }
  ~IovecBounce() {
    private_free(iov);
    private_free(data);
  }
};

bool iov_touches_global(const iovec *iov, int count) {
  if (g_hi.load(std::memory_order_relaxed) == 0 || !iov || count <= 0 || count > IOV_MAX) return false;
  for (int i = 0; i < count; ++i)
    if (touches_global(iov[i].iov_base, iov[i].iov_len)) return true;
  return false;
}

// Calls call(vector) with the global segments bounced; `in` says the
// kernel writes into the segments (readv), else reads them (writev).
template <typename Call, typename DirectCall>
ssize_t bounce_iov(const iovec *iov, int count, bool in, Call call, DirectCall direct) {
  IovecBounce b;
  switch (b.prepare(iov, count)) {
    case IovecBounce::Direct:
      return direct();
    case IovecBounce::NoMemory:
      errno = ENOMEM;
      return -1;
    case IovecBounce::Bounce:
      break;
  }
  if (!in) b.gather(iov, count);
  ssize_t got = call(b.iov);
  int saved = errno;
  if (in && got > 0) b.scatter(iov, count, (size_t)got);
  errno = saved;
  return got;
}

constexpr size_t kStdioStep = 1 << 20;

// fread (in: into ptr) or fwrite (out of ptr) in steps through libc's
// _unlocked forms, holding the stream's lock throughout unless the caller
// used an _unlocked form itself.
size_t stdio_bounced(void *ptr, size_t size, size_t n, FILE *fp, bool lock, bool in) {
  size_t total = size * n, done = 0;
  Bounce tmp(total < kStdioStep ? total : kStdioStep, nullptr);
  if (!tmp.data()) {
    errno = ENOMEM;
    return 0;
  }
  if (lock) flockfile(fp);
  while (done < total) {
    size_t step = total - done < kStdioStep ? total - done : kStdioStep, moved;
    char *at = (char *)ptr + done;
    if (in) {
      moved = LIBC(fread_unlocked)(tmp.data(), 1, step, fp);
      int saved = errno;
      std::memcpy(at, tmp.data(), moved);
      errno = saved;
    } else {
      std::memcpy(tmp.data(), at, step);
      moved = LIBC(fwrite_unlocked)(tmp.data(), 1, step, fp);
    }
    done += moved;
    if (moved < step) break;
  }
  if (lock) funlockfile(fp);
  return done / size;
}

// fread/fwrite take the slow path only for a whole, valid global buffer.
bool stdio_bounces(const void *ptr, size_t size, size_t n) {
  if (size == 0 || n == 0 || n > SIZE_MAX / size) return false;
  return touches_global(ptr, size * n) && usable(ptr, size * n);
}

void fread_chk_check(size_t ptrlen, size_t size, size_t n) {
  if (size != 0 && n > SIZE_MAX / size) __chk_fail();
  if (size * n > ptrlen) __chk_fail();
}

}  // namespace

void global_io_enable(uintptr_t lo, uintptr_t hi, RangeUsable check) {
  g_usable.store(check, std::memory_order_release);
  g_lo.store(lo, std::memory_order_relaxed);
  g_hi.store(hi, std::memory_order_release);
}

bool global_io_add_range(uintptr_t lo, uintptr_t hi) { return g_windows.add(lo, hi); }

void global_io_disable() {
  g_hi.store(0, std::memory_order_release);
  g_windows.clear();
  g_lo.store(0, std::memory_order_relaxed);
}

}  // namespace agora::platform

// ---- the interposed calls ----------------------------------------------------

using agora::platform::bounce_in;
using agora::platform::bounce_iov;
using agora::platform::bounce_out;
using agora::platform::iov_touches_global;
using agora::platform::touches_global;
using agora::platform::usable;

// One buffer: global and allocated -> bounce; else libc unchanged.
#define BOUNCED(buf, n) (touches_global(buf, n) && usable(buf, n))

extern "C" {

ssize_t read(int fd, void *buf, size_t n) {
  if (!BOUNCED(buf, n)) return LIBC(read)(fd, buf, n);
  return bounce_in(buf, n, [&](void *p) { return LIBC(read)(fd, p, n); });
}

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen) {
  if (!BOUNCED(buf, n)) return LIBC(__read_chk)(fd, buf, n, buflen);
  if (n > buflen) __chk_fail();
  return bounce_in(buf, n, [&](void *p) { return LIBC(read)(fd, p, n); });
}

ssize_t write(int fd, const void *buf, size_t n) {
  if (!BOUNCED(buf, n)) return LIBC(write)(fd, buf, n);
  return bounce_out(buf, n, [&](const void *p) { return LIBC(write)(fd, p, n); });
}

ssize_t pread(int fd, void *buf, size_t n, off_t offset) {
  if (!BOUNCED(buf, n)) return LIBC(pread)(fd, buf, n, offset);
  return bounce_in(buf, n, [&](void *p) { return LIBC(pread)(fd, p, n, offset); });
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t offset) {
  if (!BOUNCED(buf, n)) return LIBC(pread64)(fd, buf, n, offset);
  return bounce_in(buf, n, [&](void *p) { return LIBC(pread64)(fd, p, n, offset); });
}

ssize_t __pread_chk(int fd, void *buf, size_t n, off_t offset, size_t buflen) {
  if (!BOUNCED(buf, n)) return LIBC(__pread_chk)(fd, buf, n, offset, buflen);
  if (n > buflen) __chk_fail();
  return bounce_in(buf, n, [&](void *p) { return LIBC(pread)(fd, p, n, offset); });
}

ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t offset, size_t buflen) {
  if (!BOUNCED(buf, n)) return LIBC(__pread64_chk)(fd, buf, n, offset, buflen);
  if (n > buflen) __chk_fail();
  return bounce_in(buf, n, [&](void *p) { return LIBC(pread64)(fd, p, n, offset); });
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t offset) {
  if (!BOUNCED(buf, n)) return LIBC(pwrite)(fd, buf, n, offset);
  return bounce_out(buf, n, [&](const void *p) { return LIBC(pwrite)(fd, p, n, offset); });
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t offset) {
  if (!BOUNCED(buf, n)) return LIBC(pwrite64)(fd, buf, n, offset);
  return bounce_out(buf, n, [&](const void *p) { return LIBC(pwrite64)(fd, p, n, offset); });
}

#define VECTOR_CALL(name, in, ...)                                                                                    \
  {                                                                                                                   \
    auto direct = [&]() { return LIBC(name)(fd, iov, count __VA_OPT__(, ) __VA_ARGS__); };                            \
    if (!iov_touches_global(iov, count)) return direct();                                                             \
    return bounce_iov(                                                                                                \
        iov, count, in, [&](const iovec *v) { return LIBC(name)(fd, v, count __VA_OPT__(, ) __VA_ARGS__); }, direct); \
  }

ssize_t readv(int fd, const iovec *iov, int count) VECTOR_CALL(readv, true) ssize_t
    writev(int fd, const iovec *iov, int count) VECTOR_CALL(writev, false) ssize_t
    preadv(int fd, const iovec *iov, int count, off_t offset) VECTOR_CALL(preadv, true, offset) ssize_t
    pwritev(int fd, const iovec *iov, int count, off_t offset) VECTOR_CALL(pwritev, false, offset) ssize_t
    preadv64(int fd, const iovec *iov, int count, off64_t offset) VECTOR_CALL(preadv64, true, offset) ssize_t
    pwritev64(int fd, const iovec *iov, int count, off64_t offset) VECTOR_CALL(pwritev64, false, offset) ssize_t
    preadv2(int fd, const iovec *iov, int count, off_t offset, int flags)
        VECTOR_CALL(preadv2, true, offset, flags) ssize_t
    pwritev2(int fd, const iovec *iov, int count, off_t offset, int flags)
        VECTOR_CALL(pwritev2, false, offset, flags) ssize_t
    preadv64v2(int fd, const iovec *iov, int count, off64_t offset, int flags)
        VECTOR_CALL(preadv64v2, true, offset, flags) ssize_t
    pwritev64v2(int fd, const iovec *iov, int count, off64_t offset, int flags)
        VECTOR_CALL(pwritev64v2, false, offset, flags)

            ssize_t recv(int fd, void *buf, size_t n, int flags) {
  if (!BOUNCED(buf, n)) return LIBC(recv)(fd, buf, n, flags);
  return bounce_in(buf, n, [&](void *p) { return LIBC(recv)(fd, p, n, flags); });
}

ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags) {
  if (!BOUNCED(buf, n)) return LIBC(__recv_chk)(fd, buf, n, buflen, flags);
  if (n > buflen) __chk_fail();
  return bounce_in(buf, n, [&](void *p) { return LIBC(recv)(fd, p, n, flags); });
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, sockaddr *addr, socklen_t *addr_len) {
  if (!BOUNCED(buf, n)) return LIBC(recvfrom)(fd, buf, n, flags, addr, addr_len);
  return bounce_in(buf, n, [&](void *p) { return LIBC(recvfrom)(fd, p, n, flags, addr, addr_len); });
}

ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, sockaddr *addr, socklen_t *addr_len) {
  if (!BOUNCED(buf, n)) return LIBC(__recvfrom_chk)(fd, buf, n, buflen, flags, addr, addr_len);
  if (n > buflen) __chk_fail();
  return bounce_in(buf, n, [&](void *p) { return LIBC(recvfrom)(fd, p, n, flags, addr, addr_len); });
}

ssize_t send(int fd, const void *buf, size_t n, int flags) {
  if (!BOUNCED(buf, n)) return LIBC(send)(fd, buf, n, flags);
  return bounce_out(buf, n, [&](const void *p) { return LIBC(send)(fd, p, n, flags); });
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const sockaddr *addr, socklen_t addr_len) {
  if (!BOUNCED(buf, n)) return LIBC(sendto)(fd, buf, n, flags, addr, addr_len);
  return bounce_out(buf, n, [&](const void *p) { return LIBC(sendto)(fd, p, n, flags, addr, addr_len); });
}

ssize_t recvmsg(int fd, msghdr *msg, int flags) {
  if (!msg || !iov_touches_global(msg->msg_iov, (int)msg->msg_iovlen) || msg->msg_iovlen > IOV_MAX)
    return LIBC(recvmsg)(fd, msg, flags);
  return bounce_iov(
      msg->msg_iov, (int)msg->msg_iovlen, true,
      [&](const iovec *v) {
        msghdr copy = *msg;
        copy.msg_iov = const_cast<iovec *>(v);
        ssize_t got = LIBC(recvmsg)(fd, &copy, flags);
        // What the kernel reports back besides the data.
        msg->msg_namelen = copy.msg_namelen;
        msg->msg_controllen = copy.msg_controllen;
        msg->msg_flags = copy.msg_flags;
        return got;
      },
      [&]() { return LIBC(recvmsg)(fd, msg, flags); });
}

ssize_t sendmsg(int fd, const msghdr *msg, int flags) {
  if (!msg || !iov_touches_global(msg->msg_iov, (int)msg->msg_iovlen) || msg->msg_iovlen > IOV_MAX)
    return LIBC(sendmsg)(fd, msg, flags);
  return bounce_iov(
      msg->msg_iov, (int)msg->msg_iovlen, false,
      [&](const iovec *v) {
        msghdr copy = *msg;
        copy.msg_iov = const_cast<iovec *>(v);
        return LIBC(sendmsg)(fd, &copy, flags);
      },
      [&]() { return LIBC(sendmsg)(fd, msg, flags); });
}

size_t fread(void *ptr, size_t size, size_t n, FILE *fp) {
  if (!agora::platform::stdio_bounces(ptr, size, n)) return LIBC(fread)(ptr, size, n, fp);
  return agora::platform::stdio_bounced(ptr, size, n, fp, true, true);
}

size_t fread_unlocked(void *ptr, size_t size, size_t n, FILE *fp) {
  if (!agora::platform::stdio_bounces(ptr, size, n)) return LIBC(fread_unlocked)(ptr, size, n, fp);
  return agora::platform::stdio_bounced(ptr, size, n, fp, false, true);
}

size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp) {
  if (!agora::platform::stdio_bounces(ptr, size, n)) return LIBC(__fread_chk)(ptr, ptrlen, size, n, fp);
  agora::platform::fread_chk_check(ptrlen, size, n);
  return agora::platform::stdio_bounced(ptr, size, n, fp, true, true);
}

size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp) {
  if (!agora::platform::stdio_bounces(ptr, size, n)) return LIBC(__fread_unlocked_chk)(ptr, ptrlen, size, n, fp);
  agora::platform::fread_chk_check(ptrlen, size, n);
  return agora::platform::stdio_bounced(ptr, size, n, fp, false, true);
}

size_t fwrite(const void *ptr, size_t size, size_t n, FILE *fp) {
  if (!agora::platform::stdio_bounces(ptr, size, n)) return LIBC(fwrite)(ptr, size, n, fp);
  return agora::platform::stdio_bounced((void *)ptr, size, n, fp, true, false);
}

size_t fwrite_unlocked(const void *ptr, size_t size, size_t n, FILE *fp) {
  if (!agora::platform::stdio_bounces(ptr, size, n)) return LIBC(fwrite_unlocked)(ptr, size, n, fp);
  return agora::platform::stdio_bounced((void *)ptr, size, n, fp, false, false);
}

}  // extern "C"
