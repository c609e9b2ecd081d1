// The OpenMP runtime's job-wide state: a page of the program's shared .bss
// that the startup object provides (program_start.c, handed to libagora),
// zero-filled, at the same address on every rank, so that its words are
// address-named Agora locks every thread of the job names alike.
#include <dlfcn.h>

#include "omp/omp_fatal.h"
#include "omp/omp_team.h"
#include "program/program_abi.h"

namespace agora::omp {
namespace {
struct JobState {
  agora_lock_t critical;  // unnamed critical
  agora_lock_t atomic;    // GOMP_atomic_start
};
static_assert(sizeof(JobState) <= AGORA_PROGRAM_OMP_BYTES, "the page holds the job's OpenMP state");

JobState *job(const char *call) {
  require_program_mode(call);
  auto *page = static_cast<JobState *>(agora_program_omp_page());
  if (!page) fatal("%s: this program's startup object has no OpenMP page; link it with this Agora's agoracc", call);
  return page;
}

// A program linked with libgomp too (an explicit -lgomp, which comes before
// Agora's runtime): its OpenMP calls would reach libgomp, whose teams stay
// in rank 0's process, silently. The first definition in the global scope
// is the one the program's references bind to. Checked when this library
// is loaded, before the program starts.
__attribute__((constructor)) void refuse_another_runtime() {
  void *first = dlsym(RTLD_DEFAULT, "GOMP_parallel");
  Dl_info where{}, here{};
  if (first && dladdr(first, &where) && dladdr((void *)&refuse_another_runtime, &here) &&
      where.dli_fbase != here.dli_fbase) {
    const char *library = where.dli_fname ? where.dli_fname : "another library";
    fatal(
        "this program's OpenMP calls go to %s, whose threads all stay in one process, not to Agora's "
        "OpenMP runtime: link it with agoracc -fopenmp and without -lgomp (docs/openmp.md)",
        library);
  }
}
}  // namespace

agora_lock_t *job_critical_lock() { return &job("critical")->critical; }
agora_lock_t *job_atomic_lock() { return &job("atomic")->atomic; }

}  // namespace agora::omp
