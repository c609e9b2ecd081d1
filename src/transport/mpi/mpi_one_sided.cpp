#include "transport/mpi/mpi_one_sided.h"

#include <climits>
#include <cstring>
#include <utility>

namespace agora {

namespace {
std::string mpi_error_text(const char *what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(what) + " failed: " + std::string(text, (size_t)len);
}

bool unified(MPI_Win win) {
  int *model = nullptr, flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
  return flag && *model == MPI_WIN_UNIFIED;
}
}  // namespace

bool MpiOneSided::open(void *frames, size_t frame_bytes, void *meta, size_t meta_bytes, std::string *error) {
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  // A window this MPI cannot make is reported, not fatal: reads fall back
  // to messages.
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  int rc_frames = MPI_Win_create(frames, (MPI_Aint)frame_bytes, 1, MPI_INFO_NULL, comm_, &frames_);
  int rc_meta = MPI_Win_create(meta, (MPI_Aint)meta_bytes, 1, MPI_INFO_NULL, comm_, &meta_);
  // Per window: created on every rank (then it can be freed collectively),
  // and unified everywhere.
  int mine[3] = {rc_frames == MPI_SUCCESS, rc_meta == MPI_SUCCESS,
                 rc_frames == MPI_SUCCESS && rc_meta == MPI_SUCCESS && unified(frames_) && unified(meta_)};
  int all[3] = {0, 0, 0};
  MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MIN, comm_);
  if (!all[2]) {
    if (rc_frames != MPI_SUCCESS)
      *error = mpi_error_text("MPI_Win_create of the frames", rc_frames);
    else if (rc_meta != MPI_SUCCESS)
      *error = mpi_error_text("MPI_Win_create of the metadata", rc_meta);
    else if (!mine[2])
      *error = "this MPI's windows are not in the unified memory model";
    else
      *error = "another rank could not create its windows";
    // A window some rank lacks cannot be freed (collective): it is left.
    if (all[0]) MPI_Win_free(&frames_);
    if (all[1]) MPI_Win_free(&meta_);
    frames_ = meta_ = MPI_WIN_NULL;
    MPI_Comm_free(&comm_);
    return false;
  }
  MPI_Win_set_errhandler(frames_, MPI_ERRORS_RETURN);
  MPI_Win_set_errhandler(meta_, MPI_ERRORS_RETURN);
  // One passive-target epoch for the whole run: no rank ever locks
  // exclusively, so NOCHECK lets the lock cost nothing.
  MPI_Win_lock_all(MPI_MODE_NOCHECK, frames_);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, meta_);
  open_ = true;
  return true;
}

void MpiOneSided::close() {
  if (!open_) return;
  MPI_Win_unlock_all(meta_);
  MPI_Win_unlock_all(frames_);
  MPI_Win_free(&meta_);
  MPI_Win_free(&frames_);
  MPI_Comm_free(&comm_);
  open_ = false;
}

bool MpiOneSided::read_marked(Rank home, const Marks &marks, void *meta_out, size_t meta_bytes, size_t frame_offset,
                              void *frames_out, size_t frame_bytes, std::string *error) {
  static const uint8_t kOnes[256] = {
#define AGORA_ONES16 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
      AGORA_ONES16, AGORA_ONES16, AGORA_ONES16, AGORA_ONES16, AGORA_ONES16, AGORA_ONES16,
      AGORA_ONES16, AGORA_ONES16, AGORA_ONES16, AGORA_ONES16, AGORA_ONES16, AGORA_ONES16,
      AGORA_ONES16, AGORA_ONES16, AGORA_ONES16, AGORA_ONES16
#undef AGORA_ONES16
  };
  if (!open_ || marks.flag_count > sizeof kOnes || marks.summary_count > sizeof kOnes || meta_bytes > INT_MAX ||
      frame_bytes > INT_MAX) {
    *error = "one-sided read out of bounds";
    return false;
  }
  int rc;
  auto failed = [&](const char *what) {
    *error = mpi_error_text(what, rc);
    return false;
  };
  // The marks and the metadata in one epoch (neither needs to precede the
  // other), complete before the pages are read.
  for (auto [offset, count] :
       {std::pair{marks.flag_offset, marks.flag_count}, std::pair{marks.summary_offset, marks.summary_count}}) {
    if (!count) continue;
    // MPI_Put, not MPI_Accumulate(MPI_REPLACE): Open MPI 4.1.4's osc keeps
    // ~48 bytes per accumulate (8.4 MiB over 180000 marks; lrc_handoffs
    // caught it), and a put suffices: every writer of a mark byte writes 1
    // (a reader) or swaps 1 for 2 (the home); a byte cannot tear, and either
    // outcome of a race is a mark reported once more, harmlessly.
    rc = MPI_Put(kOnes, (int)count, MPI_UINT8_T, home, (MPI_Aint)offset, (int)count, MPI_UINT8_T, meta_);
    if (rc != MPI_SUCCESS) return failed("MPI_Put of the shared marks");
  }
  if (meta_bytes) {
    rc = MPI_Get(meta_out, (int)meta_bytes, MPI_BYTE, home, 0, (int)meta_bytes, MPI_BYTE, meta_);
    if (rc != MPI_SUCCESS) return failed("MPI_Get of the home's metadata");
  }
  if ((rc = MPI_Win_flush(home, meta_)) != MPI_SUCCESS) return failed("MPI_Win_flush (marks, metadata)");
  rc = MPI_Get(frames_out, (int)frame_bytes, MPI_BYTE, home, (MPI_Aint)frame_offset, (int)frame_bytes, MPI_BYTE,
               frames_);
  if (rc != MPI_SUCCESS) return failed("MPI_Get of the pages");
  if ((rc = MPI_Win_flush(home, frames_)) != MPI_SUCCESS) return failed("MPI_Win_flush (pages)");
  return true;
}

void MpiOneSided::sync_meta() {
  if (open_) MPI_Win_sync(meta_);
}

}  // namespace agora
