// A rank that srun started as one of several tasks but whose MPI wired up
// alone: srun's MPI plugin is not the one the MPI library needs, and MPICH,
// finding no PMI it speaks, runs each task as a job of one rank. Caught at
// start, or every task would run the whole program by itself.
#pragma once
#include <string>

namespace agora {

// False, with *error naming the task count and the plugin to use, when
// MPI sees `nranks` == 1 but srun started this step with more tasks
// (SLURM_STEP_NUM_TASKS). A rank that Open MPI's mpirun or MPICH's Hydra
// started inside a step (OMPI_COMM_WORLD_SIZE, PMI_SIZE) is theirs to count.
bool lone_rank_check(int nranks, std::string *error);

}  // namespace agora
