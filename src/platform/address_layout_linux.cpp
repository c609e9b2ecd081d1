// Program mode: the same address layout on every rank. A pthreads program
// may hand a thread any pointer into libc's own data: `stdout` kept in a
// global FILE * (SPLASH-3 WATER), a strerror or getenv string, a locale.
// With address-space randomisation each rank loads libc elsewhere, so such
// a pointer means nothing on another rank (issue 26). Started without
// randomisation, ranks running the same executable with the same libraries
// load them at the same addresses, and the pointer names that rank's own
// copy (its stdout, the same message). The process re-executes itself once
// with ADDR_NO_RANDOMIZE, before MPI starts; AGORA_ASLR=keep leaves it.
#include <sys/personality.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "platform/platform.h"

namespace agora::platform {

void same_address_layout(char **argv) {
  const char *choice = std::getenv("AGORA_ASLR");
  if (choice && std::strcmp(choice, "keep") == 0) return;
  if (choice && *choice && std::strcmp(choice, "off") != 0) {
    std::fprintf(stderr, "agora: AGORA_ASLR=%s is not a choice (off or keep)\n", choice);
    std::exit(2);  // NOLINT(concurrency-mt-unsafe): before main, one thread
  }
  const int current = personality(0xffffffff);
  if (current == -1 || (current & ADDR_NO_RANDOMIZE)) return;
  // Refused (e.g. a container's seccomp policy): randomised, as before; a
  // private pointer that reaches another rank then faults with a message.
  if (personality((unsigned long)current | ADDR_NO_RANDOMIZE) == -1) return;
  execv("/proc/self/exe", argv);
  // Still here: the executable cannot be run again (deleted, no /proc).
  // Go on randomised, and say why once.
  std::fprintf(stderr,
               "agora: cannot restart without address randomisation (%s); pointers into libc's data "
               "(a FILE *, strerror text) will not reach other ranks\n",
               std::strerror(errno));
  personality((unsigned long)current);
}

}  // namespace agora::platform
