#include "transport/mpi/mpi_transport.h"

#include <cstdlib>
#include <cstring>

#include "transport/mpi/launcher_mismatch.h"

namespace agora {

namespace {
constexpr int kTag = 7;
}

bool MpiTransport::init(int *argc, char ***argv, std::string *error) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    // A page message (header + 4 KiB) should go eagerly over shared memory:
    // rendezvous would need the receiver's attention for every page.
    // NOLINTNEXTLINE(concurrency-mt-unsafe): before MPI_Init, when no other thread reads the environment
    setenv("OMPI_MCA_btl_vader_eager_limit", "8192", 0);
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
      *error = "MPI_Init_thread failed";
      return false;
    }
    if (provided < MPI_THREAD_SERIALIZED) {
      *error = "the MPI library does not support MPI_THREAD_SERIALIZED, which Agora needs";
      return false;
    }
    we_initialised_ = true;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &am_);
  MPI_Comm_dup(MPI_COMM_WORLD, &world_);
  MPI_Comm_rank(am_, &rank_);
  MPI_Comm_size(am_, &nranks_);
  if (!launched_by_this_mpi(error)) return false;
  // Which ranks share a node: MPI's own notion (the launcher's node names),
  // not gethostname(), which containers and emulated hosts may share.
  MPI_Comm node;
  MPI_Comm_split_type(world_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &node_nranks_);
  Rank leader = rank_;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  node_of_.assign(nranks_, 0);
  MPI_Allgather(&leader, 1, MPI_INT, node_of_.data(), 1, MPI_INT, world_);
  return true;
}

bool MpiTransport::launched_by_this_mpi(std::string *error) const {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  auto read = [](const char *name) { return std::getenv(name); };
  std::string mismatch = launcher_mismatch(nranks_, mpi_library_name(version), read);
  if (mismatch.empty()) return true;
  *error = mismatch;
  return false;
}

void MpiTransport::finalize() {
  for (auto &o : inflight_) MPI_Wait(&o.request, MPI_STATUS_IGNORE);
  inflight_.clear();
  MPI_Comm_free(&am_);
  MPI_Comm_free(&world_);
  if (we_initialised_) MPI_Finalize();
}

void MpiTransport::abort(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

void MpiTransport::barrier() { MPI_Barrier(world_); }

std::vector<uint64_t> MpiTransport::allgather(const std::vector<uint64_t> &mine) {
  std::vector<uint64_t> all(mine.size() * (size_t)nranks_);
  MPI_Allgather(mine.data(), (int)mine.size(), MPI_UINT64_T, all.data(), (int)mine.size(), MPI_UINT64_T, world_);
  return all;
}

int64_t MpiTransport::broadcast_from_root(int64_t value) {
  MPI_Bcast(&value, 1, MPI_INT64_T, 0, world_);
  return value;
}

int64_t MpiTransport::allreduce_max(int64_t value) {
  int64_t max = value;
  MPI_Allreduce(&value, &max, 1, MPI_INT64_T, MPI_MAX, world_);
  return max;
}

size_t MpiTransport::send(Rank dst, const MsgHeader &header, Payload payload) {
  std::vector<std::byte> buf;
  if (!spare_.empty()) {
    buf = std::move(spare_.back());
    spare_.pop_back();
  }
  size_t bytes = sizeof header + payload.size;
  buf.resize(bytes);
  std::memcpy(buf.data(), &header, sizeof header);
  if (payload.size) std::memcpy(buf.data() + sizeof header, payload.data, payload.size);
  Outgoing o{MPI_REQUEST_NULL, std::move(buf)};
  MPI_Isend(o.buffer.data(), (int)bytes, MPI_BYTE, dst, kTag, am_, &o.request);
  inflight_.push_back(std::move(o));
  return bytes;
}

int MpiTransport::poll(const Handler &deliver, int budget) {
  for (size_t i = 0; i < inflight_.size();) {
    int done = 0;
    MPI_Test(&inflight_[i].request, &done, MPI_STATUS_IGNORE);
    if (!done) {
      ++i;
      continue;
    }
    if (spare_.size() < 64) spare_.push_back(std::move(inflight_[i].buffer));
    inflight_[i] = std::move(inflight_.back());
    inflight_.pop_back();
  }
  int delivered = 0;
  while (delivered < budget) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kTag, am_, &flag, &st);
    if (!flag) break;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    rx_.resize(count);
    MPI_Recv(rx_.data(), count, MPI_BYTE, st.MPI_SOURCE, kTag, am_, MPI_STATUS_IGNORE);
    MsgHeader h;
    std::memcpy(&h, rx_.data(), sizeof h);
    deliver(h, {rx_.data() + sizeof h, (size_t)count - sizeof h});
    ++delivered;
  }
  return delivered;
}

}  // namespace agora
