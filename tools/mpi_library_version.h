// The MPI library's own name and version (MPI_Get_library_version), asked of
// the library file this Agora was built with, loaded only when asked:
// agorarun runs agora-info at every launch, and linking MPI would cost each
// run 6 to 15 ms of loading it.
#pragma once
#include <string>

namespace agora {

// "MPICH 4.0.2", "Open MPI v4.1.4", or why it could not be asked.
std::string mpi_library_version(const char *library_file);

}  // namespace agora
