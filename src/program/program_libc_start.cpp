// The startup object's registration of the job's libc pages (program_abi.h).
// Only the startup object calls it, so only program-mode links pull in what
// it references: the wrappers of program_random.cpp and
// program_process_attrs.cpp, which call __real_ functions that only such a
// link (or libagora.so) defines.
#include "program/program_abi.h"
#include "program/program_libc.h"
#include "program/program_process_attrs.h"
#include "runtime/global_stacks.h"

extern "C" void agora_program_libc_state(void *pages, size_t bytes) {
  agora::program_libc_register(pages, bytes);
  // Every thread that starts on a rank first takes the attributes changed
  // before its creation.
  agora::set_body_prologue(agora::program_attrs_catch_up);
}
