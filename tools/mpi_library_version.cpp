#include "mpi_library_version.h"

#include <dlfcn.h>

#include "transport/mpi/launcher_mismatch.h"

namespace agora {

std::string mpi_library_version(const char *library_file) {
  void *library = dlopen(library_file, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return std::string("unknown (cannot load ") + library_file + ": " + (why ? why : "?") + ")";
  }
  // int MPI_Get_library_version(char *version, int *length): callable before
  // MPI_Init (MPI 3.0), with a buffer of MPI_MAX_LIBRARY_VERSION_STRING (at
  // most 8192 in the MPIs Agora knows).
  using GetLibraryVersion = int (*)(char *, int *);
  auto get = reinterpret_cast<GetLibraryVersion>(dlsym(library, "MPI_Get_library_version"));
  std::string name = "unknown (" + std::string(library_file) + " has no MPI_Get_library_version)";
  if (get) {
    std::string text(8192, '\0');
    int length = 0;
    if (get(text.data(), &length) == 0) name = mpi_library_name(text.substr(0, (size_t)length));
  }
  // Not unloaded: an MPI library may not survive dlclose.
  return name;
}

}  // namespace agora
