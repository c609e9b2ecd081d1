// The job-wide libc state's pages (program_libc.h).
#include "program/program_libc.h"

#include "common/log.h"
#include "runtime/runtime.h"
#include "runtime/store_trace.h"

namespace agora {
bool shim_runtime_live();  // agora_c.cpp

namespace {
LibcState *g_state = nullptr;  // per rank, the same address on every rank
}  // namespace

LibcState *program_libc_state() { return g_state; }

void program_libc_register(void *pages, size_t bytes) {
  if (bytes != sizeof(LibcState) || (uintptr_t)pages % kPage)
    fatal(
        "the startup object's libc state is %zu bytes at %p, Agora needs %zu, page aligned: rebuild with "
        "this Agora's agoracc",
        bytes, pages, sizeof(LibcState));
  g_state = static_cast<LibcState *>(pages);
}

void program_libc_check(uintptr_t bss_lo, uintptr_t bss_hi) {
  uintptr_t page = (uintptr_t)g_state;
  if (g_state && (page < bss_lo || page + sizeof(LibcState) > bss_hi))
    fatal(
        "the startup object's libc state pages at %p are not in the program's shared .bss [%p, %p): the "
        "startup object (agora_program_start) and the linker script (agora-program.ld) do not match",
        (void *)page, (void *)bss_lo, (void *)bss_hi);
}

LibcWhere program_libc_where() {
  if (!g_state || Runtime::in_forked_child()) return LibcWhere::Libc;
  return shim_runtime_live() ? LibcWhere::Job : LibcWhere::Local;
}

void program_libc_stored(const void *address, size_t bytes) {
  if (store_trace_active()) store_trace_record(address, (uint32_t)bytes);
}
}  // namespace agora
