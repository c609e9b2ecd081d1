// Active messages over MPI point-to-point: non-blocking sends from a buffer
// pool, probe-and-receive on one tag of a private communicator (so messages
// between a pair stay in order). Not thread-safe: the runtime serialises all
// calls under its lock (MPI_THREAD_SERIALIZED).
#pragma once
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "transport/message.h"

namespace agora {

class MpiTransport {
 public:
  // Calls MPI_Init_thread unless MPI is already initialised. Fails when
  // another MPI's launcher started the process (launcher_mismatch.h).
  bool init(int *argc, char ***argv, std::string *error);
  void finalize();
  Rank rank() const { return rank_; }
  Rank nranks() const { return nranks_; }
  // Ranks that share this rank's node as MPI sees it (MPI_COMM_TYPE_SHARED:
  // the ranks that can share memory), found once at init.
  bool same_node(Rank r) const { return node_of_[r] == node_of_[rank_]; }
  Rank node_nranks() const { return node_nranks_; }

  // Returns the bytes put on the wire (header + payload).
  size_t send(Rank dst, const MsgHeader &header, Payload payload);
  using Handler = std::function<void(const MsgHeader &, Payload)>;
  // Completes finished sends and delivers at most `budget` received
  // messages; returns how many were delivered.
  int poll(const Handler &deliver, int budget = 16);
  bool sends_pending() const { return !inflight_.empty(); }
  [[noreturn]] void abort(int status);

  // Collectives over every rank, used outside the message loop (start-up,
  // finalize). Rules: every rank calls the same ones in the same order, with
  // the same lengths; they block until every rank has called. Like every call
  // here they are serialised by the caller (under the runtime's lock once the
  // service thread polls; before it starts and after it stops, the calling
  // thread is the only one in MPI). They run on a communicator of their own,
  // so they never match an active message.
  void barrier();
  // Every rank's words, rank after rank (mine.size() words each).
  std::vector<uint64_t> allgather(const std::vector<uint64_t> &mine);
  // Root gets each rank's `bytes` bytes in rank order (the others an empty
  // vector); mpi_gather.cpp, for the reports made at finalize.
  std::vector<std::byte> gather(const void *data, size_t bytes, Rank root);
  // Root gets each rank's host name (MPI_Get_processor_name), in rank order.
  std::vector<std::string> gather_host_names(Rank root);
  // Rank 0's value, on every rank (the others' are ignored).
  int64_t broadcast_from_root(int64_t value);
  // The largest of the ranks' values, on every rank.
  int64_t allreduce_max(int64_t value);

 private:
  // Whether MPI_COMM_WORLD has as many ranks as the launcher started.
  bool launched_by_this_mpi(std::string *error) const;
  struct Outgoing {
    MPI_Request request;
    std::vector<std::byte> buffer;
  };
  MPI_Comm am_ = MPI_COMM_NULL;     // active messages
  MPI_Comm world_ = MPI_COMM_NULL;  // collectives
  Rank rank_ = 0, nranks_ = 1;
  std::vector<Rank> node_of_;  // per rank: lowest world rank of its node
  Rank node_nranks_ = 1;
  bool we_initialised_ = false;
  std::vector<Outgoing> inflight_;
  std::vector<std::vector<std::byte>> spare_;  // recycled send buffers
  std::vector<std::byte> rx_;
};

}  // namespace agora
