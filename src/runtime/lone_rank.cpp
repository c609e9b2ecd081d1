#include "runtime/lone_rank.h"

#include <cstdlib>

namespace agora {

namespace {
// A whole number of tasks, or 0.
long task_count(const char *variable) {
  const char *text = std::getenv(variable);
  if (!text || !*text) return 0;
  char *end = nullptr;
  long n = std::strtol(text, &end, 10);
  return *end ? 0 : n;
}
}  // namespace

bool lone_rank_check(int nranks, std::string *error) {
  if (nranks != 1) return true;
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE")) return true;
  long tasks = task_count("SLURM_STEP_NUM_TASKS");
  if (tasks <= 1) return true;
  *error = "srun started " + std::to_string(tasks) +
           " tasks (SLURM_STEP_NUM_TASKS) but MPI sees this one alone: srun's MPI plugin is not the one the MPI "
           "library needs (Open MPI: --mpi=pmix, MPICH: --mpi=pmi2; agorarun adds it unless --mpi, SLURM_MPI_TYPE "
           "or the site's MpiDefault chooses one; srun --mpi=list shows what this Slurm has)";
  return false;
}

}  // namespace agora
