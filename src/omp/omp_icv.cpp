// The ICVs a program starts with, from the environment (docs/openmp.md):
// OMP_NUM_THREADS (the first number of its list; default: the job's
// slots, ranks x AGORA_THREADS_PER_RANK), OMP_SCHEDULE (default dynamic,1,
// as libgomp's), OMP_DYNAMIC; OMP_PROC_BIND, OMP_PLACES, OMP_NESTED,
// OMP_MAX_ACTIVE_LEVELS and OMP_WAIT_POLICY are accepted (placement is
// Agora's, nested regions run serialised). A value that is not one ends the
// job with a message naming the variable.
#include <strings.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "omp/omp_fatal.h"
#include "omp/omp_team.h"

namespace agora::omp {

namespace {
int number_from(const char *name, const char *text) {
  char *stop = nullptr;
  errno = 0;
  long value = strtol(text, &stop, 10);
  while (stop && (*stop == ' ' || *stop == '\t')) stop++;
  if (errno || stop == text || (*stop != '\0' && *stop != ',') || value < 1 || value > 1000000)
    fatal("%s=%s is not a positive thread count (a number from 1, optionally followed by ,... for nested levels)", name,
          text);
  return (int)value;
}

bool boolean_from(const char *name, const char *text) {
  if (!strcasecmp(text, "true") || !strcmp(text, "1")) return true;
  if (!strcasecmp(text, "false") || !strcmp(text, "0")) return false;
  fatal("%s=%s is not a boolean (allowed: true, false)", name, text);
}
}  // namespace

void initial_icvs(ThreadState &t) {
  t.icvs_set = true;
  int slots = agora_program_mode() ? agora_thread_slots() : 1;
  t.nthreads_var = slots > 0 ? slots : 1;
  if (const char *text = getenv("OMP_NUM_THREADS"); text && *text)
    t.nthreads_var = number_from("OMP_NUM_THREADS", text);
  t.run_schedule = Schedule::Dynamic;
  t.run_chunk = 1;
  if (const char *text = getenv("OMP_SCHEDULE"); text && *text) {
    if (!parse_schedule(text, &t.run_schedule, &t.run_chunk))
      fatal(
          "OMP_SCHEDULE=%s is not a schedule (allowed: [monotonic:|nonmonotonic:]static|dynamic|guided|auto"
          "[,chunk] with chunk >= 1, no chunk with auto)",
          text);
  }
  t.dynamic_var = 0;
  if (const char *text = getenv("OMP_DYNAMIC"); text && *text) t.dynamic_var = boolean_from("OMP_DYNAMIC", text);
  if (const char *text = getenv("OMP_NESTED"); text && *text) (void)boolean_from("OMP_NESTED", text);
}

}  // namespace agora::omp
