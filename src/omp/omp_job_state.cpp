// The OpenMP runtime's job-wide state: a page of the program's shared .bss
// that the startup object provides (program_start.c), zero-filled, at the
// same address on every rank, so that its words are address-named Agora
// locks every thread of the job names alike.
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
  static_assert(sizeof(agora::omp::JobState) <= AGORA_PROGRAM_OMP_BYTES, "the page holds the job's OpenMP state");
  if (bytes < sizeof(agora::omp::JobState)) agora::fatal("agora_program_omp_state: %zu bytes is too small", bytes);
  agora::omp::g_job = static_cast<agora::omp::JobState *>(page);
}
