#include "platform/platform.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "common/log.h"

namespace agora::platform {

namespace {
// vm.overcommit_memory: 0 heuristic, 1 always, 2 strict (-1 if unknown).
int overcommit_policy() {
  FILE *f = std::fopen("/proc/sys/vm/overcommit_memory", "r");
  int v = -1;
  if (f) {
    if (std::fscanf(f, "%d", &v) != 1) v = -1;
    std::fclose(f);
  }
  return v;
}
}  // namespace

bool vm_reserve(uintptr_t base, size_t size, GlobalRange *out, std::string *error) {
  // Name the limit a range cannot fit under before trying: the errors of
  // mmap and ftruncate (EEXIST, ENOMEM, SIGXFSZ) do not say which it is.
  // Pages are kPageSize bytes throughout (the protocols' unit, the
  // protection's granule): a kernel with larger pages (16K or 64K, some
  // aarch64 kernels) cannot protect them one by one.
  long system_page = sysconf(_SC_PAGESIZE);
  if (system_page != (long)kPageSize) {
    *error = "this kernel's pages are " + std::to_string(system_page) + " bytes; Agora is built for " +
             std::to_string(kPageSize) +
             "-byte pages (kPageSize in src/platform/platform.h): run on "
             "a kernel with 4K pages";
    return false;
  }
  VmRoom room;
  bool have_room = vm_room(base, &room);
  if (have_room) {
    std::string shortfall = vm_room_shortfall(base, size, room);
    if (!shortfall.empty()) {
      *error = shortfall;
      return false;
    }
  }
  auto failed = [&](const char *what) {
    int err = errno;
    *error = std::string(what) + " (" + human_bytes(size) + "): " + system_error_text(err);
    if (err == ENOMEM && overcommit_policy() == 2)
      *error += " (vm.overcommit_memory=2, strict accounting: allow overcommit, or lower the size)";
    if (have_room) *error += "; at most " + human_bytes(room.largest) + " fitted in this process";
    return false;
  };
  int fd = memfd_create("agora-global", MFD_CLOEXEC);
  if (fd < 0) return failed("memfd_create failed");
  if (ftruncate(fd, (off_t)size) != 0) {
    failed("cannot size the global memory file");
    close(fd);
    return false;
  }
  void *app = mmap((void *)base, size, PROT_NONE, MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd, 0);
  if (app == MAP_FAILED || app != (void *)base) {
    if (app != MAP_FAILED) {
      munmap(app, size);
      errno = EEXIST;  // a kernel older than 4.17 treats the address as a hint
    }
    char what[96];
    std::snprintf(what, sizeof what, "cannot map the application view at %p", (void *)base);
    failed(what);
    close(fd);
    return false;
  }
  void *svc = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (svc == MAP_FAILED) {
    failed("cannot map the service view");
    munmap(app, size);
    close(fd);
    return false;
  }
  out->app_view = (std::byte *)app;
  out->service_view = (std::byte *)svc;
  out->size = size;
  out->fd = fd;
  return true;
}

void vm_release(GlobalRange *range) {
  if (!range->app_view) return;
  munmap(range->app_view, range->size);
  munmap(range->service_view, range->size + range->extra);
  close(range->fd);
  *range = GlobalRange{};
}

bool vm_protect(void *addr, size_t len, Access access) {
  int prot = access == Access::None ? PROT_NONE : access == Access::Read ? PROT_READ : PROT_READ | PROT_WRITE;
  return mprotect(addr, len, prot) == 0;
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex word must be a plain 32-bit word");

void futex_wait(std::atomic<uint32_t> *word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t> *word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

bool cpu_affinity(std::vector<uint64_t> *mask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  mask->assign((CPU_SETSIZE + 63) / 64, 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) (*mask)[cpu / 64] |= 1ull << (cpu % 64);
  return true;
}

int process_id() { return getpid(); }
int thread_id() { return (int)syscall(SYS_gettid); }

std::vector<int> thread_ids() {
  std::vector<int> ids;
  if (DIR *d = opendir("/proc/self/task")) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.') ids.push_back(std::atoi(e->d_name));
    closedir(d);
  }
  return ids;
}

namespace {
// One walk over the loaded modules (the executable comes first, named "").
struct ModuleQuery {
  // In: find the module holding `addr`, or (by_name) the one named `name`.
  bool by_name = false;
  uintptr_t addr = 0;
  const std::string *name = nullptr;
  // Out.
  bool found = false;
  bool executable = false;  // addr lies in an executable segment
  uintptr_t bias = 0;       // dlpi_addr: load address minus link address
  std::string module;
  bool first = true;
};

bool in_executable_segment(const dl_phdr_info *info, uintptr_t addr, bool *in_any) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (addr >= lo && addr < lo + ph.p_memsz) {
      *in_any = true;
      return (ph.p_flags & PF_X) != 0;
    }
  }
  return false;
}

int visit_module(dl_phdr_info *info, size_t, void *data) {
  auto *q = (ModuleQuery *)data;
  std::string name = q->first ? std::string() : std::string(info->dlpi_name ? info->dlpi_name : "");
  q->first = false;
  if (q->by_name) {
    if (name != *q->name) return 0;
    q->addr += info->dlpi_addr;  // offset -> address
  }
  bool in_any = false;
  bool exec = in_executable_segment(info, q->addr, &in_any);
  if (!in_any && !q->by_name) return 0;
  q->found = true;
  q->executable = exec;
  q->bias = info->dlpi_addr;
  q->module = name;
  return 1;
}

std::string module_label(const std::string &module) { return module.empty() ? std::string("the executable") : module; }
}  // namespace

bool code_ref_from_address(const void *fn, std::string *module, uint64_t *offset, std::string *error) {
  Dl_info di{};
  if (!fn || !dladdr(fn, &di)) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "%p is not in the executable or any loaded library", fn);
    *error = msg;
    return false;
  }
  ModuleQuery q;
  q.addr = (uintptr_t)fn;
  dl_iterate_phdr(visit_module, &q);
  if (!q.found || !q.executable) {
    char msg[512];
    std::snprintf(msg, sizeof msg, "%p is not code (it lies in a data segment of %s)", fn,
                  q.found ? module_label(q.module).c_str() : di.dli_fname);
    *error = msg;
    return false;
  }
  *module = q.module;
  *offset = (uintptr_t)fn - q.bias;
  return true;
}

void *code_ref_to_address(const std::string &module, uint64_t offset, std::string *error) {
  ModuleQuery q;
  q.by_name = true;
  q.name = &module;
  q.addr = offset;
  dl_iterate_phdr(visit_module, &q);
  if (!q.found || !q.executable) {
    char msg[512];
    std::snprintf(msg, sizeof msg, "%s (offset 0x%llx): %s", module_label(module).c_str(), (unsigned long long)offset,
                  q.found ? "not code here (do all ranks run the same program?)"
                          : "not loaded in this process (load the library on every rank)");
    *error = msg;
    return nullptr;
  }
  return (void *)q.addr;
}

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void sleep_us(uint32_t us) {
  timespec ts{(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void thread_yield() { sched_yield(); }

void thread_reduce_timer_slack() { prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); }

bool file_writable(const std::string &path, std::string *reason) {
  struct stat st;
  if (path.empty()) {
    *reason = "the path is empty";
    return false;
  }
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      *reason = "it is a directory";
      return false;
    }
    // Opened, not only access()ed: access() says yes to root whatever the
    // mode, and knows nothing of read-only or pseudo file systems (/proc).
    int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      *reason = std::string("the file cannot be written: ") + system_error_text(errno);
      return false;
    }
    close(fd);
    return true;
  }
  if (errno != ENOENT) {
    *reason = system_error_text(errno);
    return false;
  }
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (stat(dir.c_str(), &st) != 0) {
    *reason = "directory " + dir + (errno == ENOENT ? " does not exist" : ": " + std::string(system_error_text(errno)));
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    *reason = dir + " is not a directory";
    return false;
  }
  // Created and removed again, for the same reason as above.
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return true;  // made meanwhile by someone else: it exists now
    *reason = "directory " + dir + " is not writable: " + system_error_text(errno);
    return false;
  }
  close(fd);
  unlink(path.c_str());
  return true;
}

}  // namespace agora::platform
