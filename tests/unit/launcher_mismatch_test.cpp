// The library's name from MPI_Get_library_version's text, and the mismatch
// between the launcher's count of processes and MPI_COMM_WORLD's.
#include "transport/mpi/launcher_mismatch.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace agora {
namespace {

TEST(MpiLibraryName, MpichAndOpenMpi) {
  EXPECT_EQ(mpi_library_name("MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 2022\n"), "MPICH 4.0.2");
  EXPECT_EQ(mpi_library_name("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4"),
            "Open MPI v4.1.4");
  EXPECT_EQ(mpi_library_name(""), "an unknown MPI library");
}

// A fake environment.
EnvironmentReader environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const char *name) -> const char * {
    auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
}

TEST(LauncherMismatch, MpichProgramUnderOpenMpiMpirun) {
  EXPECT_EQ(launcher_mismatch(1, "MPICH 4.0.2", environment({{"OMPI_COMM_WORLD_SIZE", "3"}})),
            "this program runs on MPICH 4.0.2, but it was started by Open MPI's mpirun (OMPI_COMM_WORLD_SIZE=3): "
            "each of its 3 processes is a job of 1 rank. Start it with the launcher of MPICH 4.0.2 (MPICH's mpiexec "
            "(Hydra)), e.g. the agorarun of the Agora it was built with (agora-info names its MPI)");
}

TEST(LauncherMismatch, OpenMpiProgramUnderHydra) {
  std::string message = launcher_mismatch(1, "Open MPI v4.1.4", environment({{"PMI_SIZE", "2"}}));
  EXPECT_NE(message.find("started by MPICH's mpiexec (Hydra) (PMI_SIZE=2)"), std::string::npos) << message;
  EXPECT_NE(message.find("launcher of Open MPI v4.1.4 (Open MPI's mpirun)"), std::string::npos) << message;
}

TEST(LauncherMismatch, AgreeingOrAbsentLauncherIsNoMismatch) {
  EXPECT_EQ(launcher_mismatch(2, "Open MPI v4.1.4", environment({{"OMPI_COMM_WORLD_SIZE", "2"}})), "");
  EXPECT_EQ(launcher_mismatch(4, "MPICH 4.0.2", environment({{"PMI_SIZE", "4"}})), "");
  EXPECT_EQ(launcher_mismatch(1, "MPICH 4.0.2", environment({})), "");  // a singleton run without a launcher
  EXPECT_EQ(launcher_mismatch(1, "MPICH 4.0.2", environment({{"PMI_SIZE", "1"}})), "");
  EXPECT_EQ(launcher_mismatch(1, "MPICH 4.0.2", environment({{"OMPI_COMM_WORLD_SIZE", "x"}})), "");
}

TEST(LauncherMismatch, SameMpiButFewerRanksNamesNoOtherLauncher) {
  std::string message = launcher_mismatch(1, "MPICH 4.0.2", environment({{"PMI_SIZE", "2"}}));
  EXPECT_NE(message.find("launcher of MPICH 4.0.2, e.g."), std::string::npos) << message;
}

}  // namespace
}  // namespace agora
