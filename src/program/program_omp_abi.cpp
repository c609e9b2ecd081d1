// What libagora exports for its OpenMP runtime, libagora_omp.so
// (program_abi.h): the job's OpenMP page, address-named locks, and the
// job's end with a message. The runtime is a library of its own so that a
// program linking libagora and libgomp (an SPMD program with OpenMP inside
// each rank) keeps libgomp's GOMP_* functions.
#include "agora/agora.h"
#include "common/log.h"
#include "program/program_abi.h"

namespace agora {
// agora_c.cpp: the lock named by an address.
int shim_lock_address(const void *address, bool lock);
int shim_trylock_address(const void *address, bool program_try);
bool shim_holds_address(const void *address);
}  // namespace agora

namespace {
void *g_omp_page = nullptr;  // per rank: the same address on every rank
}

extern "C" {

void agora_program_omp_state(void *page, size_t bytes) {
  if (bytes < AGORA_PROGRAM_OMP_BYTES) agora::fatal("agora_program_omp_state: %zu bytes is too small", bytes);
  g_omp_page = page;
}

void *agora_program_omp_page(void) { return g_omp_page; }

int agora_program_lock_address(const void *address, int op) {
  switch (op) {
    case 0:
      return agora::shim_lock_address(address, false);
    case 1:
      return agora::shim_lock_address(address, true);
    case 2:
      return agora::shim_trylock_address(address, true);
    case 3:
      return agora::shim_holds_address(address) ? 1 : 0;
    default:
      return AGORA_ERR_INVALID_ARGUMENT;
  }
}

void agora_program_fatal(const char *message) { agora::fatal("%s", message); }

}  // extern "C"
