// The OpenMP runtime's job-wide state: a page of the program's shared .bss
// that the startup object provides (program_start.c), zero-filled, at the
// same address on every rank, so that its words are address-named Agora
// locks every thread of the job names alike.
#include <dlfcn.h>

#include "common/log.h"
#include "omp/omp_team.h"
#include "program/program_abi.h"

namespace agora::omp {
namespace {
struct JobState {
  agora_lock_t critical;  // unnamed critical
  agora_lock_t atomic;    // GOMP_atomic_start
};
JobState *g_job = nullptr;  // per rank: the page's address, the same on every rank

JobState *job(const char *call) {
  require_program_mode(call);
  if (!g_job) fatal("%s: this program's startup object has no OpenMP page; link it with this Agora's agoracc", call);
  return g_job;
}
}  // namespace

agora_lock_t *job_critical_lock() { return &job("critical")->critical; }
agora_lock_t *job_atomic_lock() { return &job("atomic")->atomic; }

}  // namespace agora::omp

extern "C" void agora_program_omp_state(void *page, size_t bytes) {
  // A program linked with libgomp too (an explicit -lgomp before Agora):
  // its OpenMP calls would reach libgomp, whose teams stay in rank 0's
  // process, silently. The first definition in the global scope is the one
  // the program's references bind to (&GOMP_parallel here would be that
  // one too, through the GOT: compare the modules instead).
  void *first = dlsym(RTLD_DEFAULT, "GOMP_parallel");
  Dl_info where{}, agora{};
  if (first && dladdr(first, &where) && dladdr((void *)&agora::omp::job_critical_lock, &agora) &&
      where.dli_fbase != agora.dli_fbase) {
    const char *library = where.dli_fname ? where.dli_fname : "another library";
    agora::fatal(
        "this program's OpenMP calls go to %s, whose threads all stay in one process, not to Agora's "
        "OpenMP runtime: link it with agoracc -fopenmp and without -lgomp (docs/openmp.md)",
        library);
  }
  static_assert(sizeof(agora::omp::JobState) <= AGORA_PROGRAM_OMP_BYTES, "the page holds the job's OpenMP state");
  if (bytes < sizeof(agora::omp::JobState)) agora::fatal("agora_program_omp_state: %zu bytes is too small", bytes);
  agora::omp::g_job = static_cast<agora::omp::JobState *>(page);
}
