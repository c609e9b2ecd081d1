// Program mode at start-up: the executable's .data/.bss windows become
// global pages homed on rank 0 (see memory/program_windows.h): rank 0 copies
// their current contents into the memory object as home frames, then every
// rank maps the memory object over the windows' addresses; other ranks start
// without access and fetch pages from rank 0 like any other global page.
#include <cstring>
#include <optional>

#include "common/log.h"
#include "runtime/program_request.h"
#include "runtime/runtime.h"

namespace agora {

namespace {
std::optional<ProgramRequest> g_request;

std::string hex(uintptr_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#llx", (unsigned long long)a);
  return buf;
}

// A fault outside global memory, in a program whose ranks share only
// global memory: say what may have happened before the usual crash.
void private_pointer_hint(void *addr) {
  log_error(
      "segmentation fault at %p, outside global memory. In a program built with agoracc "
      "only the program's own globals, stacks and malloc'd memory are shared: a pointer to "
      "memory private to a rank (a library's data, a FILE *, getenv/strerror strings, "
      "thread-local storage, memory libc allocated) may have reached another rank "
      "(docs/programs.md)",
      addr);
}
}  // namespace

void program_request_set(const ProgramRequest &request) { g_request = request; }
const ProgramRequest *program_request() { return g_request ? &*g_request : nullptr; }

bool Runtime::setup_program_windows(std::string *error) {
  const ProgramRequest &req = *program_request();
  const uint64_t page = page_size();
  struct Win {
    uintptr_t lo, hi;
    const char *name;
  } wins[2] = {{req.data_lo, req.data_hi, ".data"}, {req.bss_lo, req.bss_hi, ".bss"}};
  for (const Win &w : wins) {
    if (w.lo % page || w.hi % page || w.hi < w.lo) {
      *error = std::string("the program's shared ") + w.name + " window " + hex(w.lo) + ".." + hex(w.hi) +
               " is not page aligned: link the program with agoracc (its linker script "
               "agora-program.ld aligns it)";
      return false;
    }
    if (w.hi > w.lo && w.hi > kBase && w.lo < kBase + space_->size()) {
      *error = std::string("the program's ") + w.name + " at " + hex(w.lo) +
               " overlaps the global range: link with agoracc (-no-pie)";
      return false;
    }
  }
  // The same addresses on every rank: a position-independent executable
  // loads at a random address in each process, and its globals could not
  // be shared.
  std::vector<uint64_t> mine = {req.data_lo, req.data_hi, req.bss_lo, req.bss_hi};
  std::vector<uint64_t> all = transport_.allgather(mine);
  for (Rank r = 1; r < nranks(); ++r)
    if (std::memcmp(&all[0], &all[4 * (size_t)r], 4 * sizeof(uint64_t)) != 0) {
      *error = "the program's globals are at " + hex(all[0]) + " on rank 0 but at " + hex(all[4 * (size_t)r]) +
               " on rank " + std::to_string(r) +
               ": the executable is position independent (PIE); link it with agoracc (-no-pie)";
      return false;
    }
  uint64_t total = (req.data_hi - req.data_lo) + (req.bss_hi - req.bss_lo);
  if (!platform::vm_grow(&range_, total, error)) return false;
  for (const Win &w : wins)
    if (w.hi > w.lo) space_->windows().add(w.lo, w.hi - w.lo);
  const ProgramWindows &windows = space_->windows();
  for (int i = 0; i < windows.count(); ++i) {
    uintptr_t addr = windows.addr(i);
    uint64_t bytes = windows.bytes(i);
    PageId first = windows.first_page(i);
    // The home's frames start as the program's image (initialised data,
    // and whatever earlier constructors wrote). With memory servers each
    // server copies the pages it homes from its own image (the same
    // executable, started the same way).
    if (space_->servers() > 0) {
      for (uint64_t off = 0; off < bytes; off += page)
        if (home_of(first + off / page) == rank())
          std::memcpy(frame(first + off / page), (const void *)(addr + off), page);
    } else if (rank() == ProgramWindows::kHome) {
      std::memcpy(frame(first), (const void *)addr, bytes);
    }
    if (!platform::vm_map_window(range_, addr, bytes, first * page, error)) return false;
    if (space_->servers() == 0 && rank() == ProgramWindows::kHome &&
        !platform::vm_protect((void *)addr, bytes, engine_->home_access())) {
      *error = "cannot open the program's globals on rank 0: " + std::string(system_error_text(errno));
      return false;
    }
    if (!platform::fault_handler_add_range(addr, addr + bytes) || !platform::global_io_add_range(addr, addr + bytes)) {
      *error = "too many program windows";
      return false;
    }
  }
  platform::fault_handler_set_hint(private_pointer_hint);
  program_mode_ = true;
  log_debug("program mode: %llu bytes of globals shared (%d windows), stacks of %llu bytes", (unsigned long long)total,
            windows.count(), (unsigned long long)config_.stack_bytes);
  return true;
}

void Runtime::fetch_program_windows() {
  // Memory servers home the globals: rank 0 reads every page of them now,
  // after the last barrier, so that its copies hold the final contents.
  if (!program_mode_ || space_->servers() == 0 || rank() != ProgramWindows::kHome) return;
  const ProgramWindows &windows = space_->windows();
  for (int i = 0; i < windows.count(); ++i)
    for (uint64_t off = 0; off < windows.bytes(i); off += page_size())
      (void)*(volatile const char *)(windows.addr(i) + off);
}

void Runtime::open_program_windows_after_stop() {
  // The job is over; rank 0 holds the final contents of the globals (the
  // last barrier brought every write home): the program's remaining exit
  // handlers and destructors see them as ordinary memory.
  if (!program_mode_ || rank() != ProgramWindows::kHome) return;
  // With memory servers rank 0 read every window page at stop
  // (fetch_program_windows), after the last barrier: its copies are final.
  const ProgramWindows &windows = space_->windows();
  for (int i = 0; i < windows.count(); ++i)
    platform::vm_protect((void *)windows.addr(i), windows.bytes(i), Access::Write);
}

}  // namespace agora
