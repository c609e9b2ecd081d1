// Whether the launcher that started this process agrees with the MPI it runs
// on. Another MPI's launcher (Open MPI's mpirun for a program built with
// MPICH, MPICH's Hydra mpiexec for one built with Open MPI) starts N
// processes that each find themselves alone in MPI_COMM_WORLD and would run
// the program N times over (docs/mpi.md). No MPI call here: the transport
// passes what MPI said, so the unit tests can drive it.
#pragma once
#include <functional>
#include <string>

namespace agora {

// "MPICH 4.0.2" or "Open MPI v4.1.4" from the text of
// MPI_Get_library_version (its first line, up to the first comma).
std::string mpi_library_name(const std::string &version_text);

using EnvironmentReader = std::function<const char *(const char *)>;

// The message for a process that MPI puts in a world of `world_size` ranks
// while its launcher's variables (OMPI_COMM_WORLD_SIZE of Open MPI's mpirun,
// PMI_SIZE of MPICH's Hydra, read with `getenv`) say it started more; empty
// when they agree.
std::string launcher_mismatch(int world_size, const std::string &library, const EnvironmentReader &getenv);

}  // namespace agora
