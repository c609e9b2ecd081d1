// The omp_*_lock API (docs/openmp.md). gcc's omp_lock_t is 4 bytes and
// omp_nest_lock_t 16 (libgomp's layout), too small for an agora_lock_t
// beside a count: each lock is the Agora lock named by its address (as the
// pthreads shim names a mutex), which any thread on any rank takes alike.
// A nest lock keeps its depth in its second word, written only by the
// holder. The lock's memory must be global memory (a global, the heap, a
// stack of a program built with agoracc) to be shared across ranks.
#include "omp/omp_fatal.h"
#include "omp/omp_team.h"
#include "program/program_abi.h"

using namespace agora::omp;

namespace {
// libagora's address-named locks (program_abi.h).
bool holds(const void *lock) { return agora_program_lock_address(lock, 3) == 1; }

// libgomp's omp_nest_lock_t: { int lock; int count; void *owner; }.
struct NestLock {
  int lock;
  int count;
  void *owner;
};

void lock_at(const void *lock, const char *call) {
  require_program_mode(call);
  if (int status = agora_program_lock_address(lock, 1)) failed(call, "taking the lock", status);
}
void unlock_at(const void *lock, const char *call) {
  if (int status = agora_program_lock_address(lock, 0)) failed(call, "releasing the lock", status);
}
bool trylock_at(const void *lock, const char *call) {
  require_program_mode(call);
  int status = agora_program_lock_address(lock, 2);
  if (status == AGORA_OK) return true;
  if (status == AGORA_BUSY) return false;
  failed(call, "trying the lock", status);
}
}  // namespace

extern "C" {

struct omp_lock_t;
struct omp_nest_lock_t;

void omp_init_lock(omp_lock_t *) {}
void omp_destroy_lock(omp_lock_t *) {}
void omp_set_lock(omp_lock_t *lock) {
  if (holds(lock))
    agora::omp::fatal(
        "omp_set_lock: the calling thread already holds this lock (a simple lock is not nestable; "
        "use omp_nest_lock_t)");
  lock_at(lock, "omp_set_lock");
}
void omp_unset_lock(omp_lock_t *lock) { unlock_at(lock, "omp_unset_lock"); }
int omp_test_lock(omp_lock_t *lock) { return trylock_at(lock, "omp_test_lock") ? 1 : 0; }

void omp_init_nest_lock(omp_nest_lock_t *lock) { reinterpret_cast<NestLock *>(lock)->count = 0; }
void omp_destroy_nest_lock(omp_nest_lock_t *) {}
void omp_set_nest_lock(omp_nest_lock_t *lock) {
  auto *n = reinterpret_cast<NestLock *>(lock);
  if (!holds(lock)) {
    lock_at(lock, "omp_set_nest_lock");
    n->count = 0;
  }
  n->count++;
}
void omp_unset_nest_lock(omp_nest_lock_t *lock) {
  auto *n = reinterpret_cast<NestLock *>(lock);
  if (!holds(lock)) agora::omp::fatal("omp_unset_nest_lock: the calling thread does not hold this lock");
  if (--n->count == 0) unlock_at(lock, "omp_unset_nest_lock");
}
int omp_test_nest_lock(omp_nest_lock_t *lock) {
  auto *n = reinterpret_cast<NestLock *>(lock);
  if (!holds(lock)) {
    if (!trylock_at(lock, "omp_test_nest_lock")) return 0;
    n->count = 0;
  }
  return ++n->count;
}

}  // extern "C"
