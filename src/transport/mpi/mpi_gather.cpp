// Gathers to one rank for the reports made at finalize (statistics).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/log.h"
#include "transport/mpi/mpi_transport.h"

namespace agora {

std::vector<std::byte> MpiTransport::gather(const void *data, size_t bytes, Rank root) {
  if (bytes > (size_t)INT32_MAX || (rank_ == root && bytes * (size_t)nranks_ / (size_t)nranks_ != bytes))
    fatal("MpiTransport::gather: %zu bytes per rank from %d ranks is too many", bytes, (int)nranks_);
  std::vector<std::byte> all(rank_ == root ? bytes * nranks_ : 0);
  MPI_Gather(data, (int)bytes, MPI_BYTE, all.data(), (int)bytes, MPI_BYTE, root, world_);
  return all;
}

std::vector<std::string> MpiTransport::gather_host_names(Rank root) {
  // Fixed-size slots: one gather, names cut at MPI_MAX_PROCESSOR_NAME.
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  if (MPI_Get_processor_name(name, &len) != MPI_SUCCESS) std::snprintf(name, sizeof name, "?");
  std::vector<std::byte> all = gather(name, sizeof name, root);
  std::vector<std::string> hosts;
  for (Rank r = 0; r < (Rank)(all.size() / sizeof name); ++r) {
    const char *slot = reinterpret_cast<const char *>(all.data()) + r * sizeof name;
    hosts.emplace_back(slot, strnlen(slot, MPI_MAX_PROCESSOR_NAME));
  }
  return hosts;
}

}  // namespace agora
