// One-sided reads over MPI RMA: two windows created collectively at
// start-up, each rank exposing
//   - frames: its service view of the global range (every rank's home
//     frames live there), and
//   - meta: its engine metadata, one summary byte per kPagesPerSummary pages
//     and one flag byte per page,
// locked once for passive-target access (MPI_Win_lock_all, NOCHECK) and
// unlocked and freed at stop. The memory model must be unified (a local
// store is visible to RMA after MPI_Win_sync and vice versa); Open MPI's
// osc/rdma over shared memory is. Across TCP hosts Open MPI 4.1 emulates RMA
// with active messages that the target progresses in its own MPI calls (its
// service thread's polls): slower, still correct.
//
// Not thread-safe: the runtime serialises every call under its lock, like
// MpiTransport's.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/types.h"

namespace agora {

class MpiOneSided {
 public:
  // Collective over MPI_COMM_WORLD. False (with *error) if any rank could not
  // create its windows; then nothing is open and reads must take messages.
  bool open(void *frames, size_t frame_bytes, void *meta, size_t meta_bytes, std::string *error);
  bool is_open() const { return open_; }
  // Collective; before MPI_Finalize.
  void close();

  // Where in the home's meta window a read leaves its marks: `flag_count`
  // flag bytes at `flag_offset`, then `summary_count` summary bytes at
  // `summary_offset` (the home looks at flags only where a summary says so).
  struct Marks {
    size_t flag_offset, flag_count, summary_offset, summary_count;
  };
  // Reads from `home` in two steps, the first complete before the second:
  //  1. sets the flag and summary bytes to 1 (MPI_Put: readers may mark
  //     the same byte at once, all with 1) and reads `meta_bytes` from meta
  //     offset 0 into meta_out;
  //  2. reads `frame_bytes` from frames offset `frame_offset` into frames_out.
  // False (with *error) if MPI reports a failure.
  bool read_marked(Rank home, const Marks &marks, void *meta_out, size_t meta_bytes, size_t frame_offset,
                   void *frames_out, size_t frame_bytes, std::string *error);
  // Makes RMA writes to this rank's meta window visible to its loads (and
  // its stores to later RMA reads).
  void sync_meta();

 private:
  bool open_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win frames_ = MPI_WIN_NULL, meta_ = MPI_WIN_NULL;
};

}  // namespace agora
