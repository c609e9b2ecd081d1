#include "transport/mpi/launcher_mismatch.h"

#include <cstdlib>

namespace agora {

std::string mpi_library_name(const std::string &version_text) {
  std::string line = version_text.substr(0, version_text.find_first_of("\n,"));
  // MPICH: "MPICH Version:\t4.0.2" -> "MPICH 4.0.2".
  std::string name;
  bool space = false;
  for (char c : line) {
    if (c == ' ' || c == '\t') {
      space = !name.empty();
      continue;
    }
    if (space) name += ' ';
    space = false;
    name += c;
  }
  const std::string version_word = "Version: ";
  if (auto at = name.find(version_word); at != std::string::npos) name.erase(at, version_word.size());
  return name.empty() ? "an unknown MPI library" : name;
}

namespace {

// A launcher's count of processes, 0 when its variable is absent or not a number.
long launcher_size(const EnvironmentReader &getenv, const char *variable) {
  const char *text = getenv(variable);
  if (!text || !*text) return 0;
  char *end = nullptr;
  long size = std::strtol(text, &end, 10);
  return *end ? 0 : size;
}

}  // namespace

std::string launcher_mismatch(int world_size, const std::string &library, const EnvironmentReader &getenv) {
  struct Launcher {
    const char *variable;  // the number of processes it started
    const char *name;
    const char *vendor;  // as MPI_Get_library_version names it
    const char *other;   // the other MPI's launcher
  };
  const Launcher launchers[] = {
      {"OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun", "Open MPI", "MPICH's mpiexec (Hydra)"},
      {"PMI_SIZE", "MPICH's mpiexec (Hydra)", "MPICH", "Open MPI's mpirun"},
  };
  for (const Launcher &l : launchers) {
    long started = launcher_size(getenv, l.variable);
    if (started <= world_size) continue;
    std::string message = "this program runs on " + library;
    message += ", but it was started by ";
    message += l.name;
    message += " (" + std::string(l.variable) + "=" + std::to_string(started) + "): each of its ";
    message += std::to_string(started) + " processes is a job of " + std::to_string(world_size);
    message += world_size == 1 ? " rank" : " ranks";
    message += ". Start it with the launcher of " + library;
    if (library.find(l.vendor) == std::string::npos) message += " (" + std::string(l.other) + ")";
    message += ", e.g. the agorarun of the Agora it was built with (agora-info names its MPI)";
    return message;
  }
  return "";
}

}  // namespace agora
