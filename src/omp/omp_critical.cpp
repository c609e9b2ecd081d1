// critical and GOMP_atomic_start (docs/openmp.md): Agora locks, so that
// the section excludes threads on every rank and its writes reach the next
// holder under every protocol. A named critical's lock is the pointer-sized
// common symbol gcc emits for the name (.gomp_critical_user_NAME), a zero
// word of the program's shared .bss: an address-named Agora lock. The
// unnamed one and the atomic one are in a page of the program's shared .bss
// the startup object provides (omp_job_state.cpp).
#include "omp/omp_fatal.h"
#include "omp/omp_team.h"

using namespace agora::omp;

namespace {
void take(agora_lock_t *lock, const char *call) {
  if (int status = agora_lock(lock)) failed(call, "taking the lock", status);
}
void give(agora_lock_t *lock, const char *call) {
  if (int status = agora_unlock(lock)) failed(call, "releasing the lock", status);
}
}  // namespace

static_assert(sizeof(agora_lock_t) == sizeof(void *), "a named critical's word holds an address-named lock");

extern "C" {

void GOMP_critical_start(void) { take(job_critical_lock(), "GOMP_critical_start"); }
void GOMP_critical_end(void) { give(job_critical_lock(), "GOMP_critical_end"); }

void GOMP_critical_name_start(void **name) {
  require_program_mode("GOMP_critical_name_start");
  take(reinterpret_cast<agora_lock_t *>(name), "GOMP_critical_name_start");
}
void GOMP_critical_name_end(void **name) { give(reinterpret_cast<agora_lock_t *>(name), "GOMP_critical_name_end"); }

void GOMP_atomic_start(void) { take(job_atomic_lock(), "GOMP_atomic_start"); }
void GOMP_atomic_end(void) { give(job_atomic_lock(), "GOMP_atomic_end"); }

}  // extern "C"
