// The program's file descriptors, job-wide (program_descriptors.cpp): for
// the stdio streams' wraps (program_streams.cpp).
#pragma once
#include <functional>

namespace agora {

// A descriptor the program just got on this rank (from fopen's open, say):
// recorded as this rank's in the job's table, moved to another number if
// another rank's descriptor has this one. Returns the number to use (-1
// with errno set if no number is free). fd < 0 passes through.
int program_fd_adopt(int fd);
// Whether a call on fd runs on this rank as it is (outside the job, the
// standard descriptors, this rank's own).
bool program_fd_here(int fd);
// The job's record of the program's streams (FILE *): made on this rank
// (open) or closed here; and the rank that made a stream (-1: none recorded).
void program_stream_record(const void *stream, bool open);
int program_stream_owner(const void *stream);
// fcntl(fd, F_GETFL), on fd's owner.
int program_fd_status_flags(int fd);
// EBADF for a number that is not the program's (with the guard's message).
int program_fd_refuse(int fd, const char *call);
// fd was closed on this rank by a call Agora does not see (freopen's own close).
void program_fd_forget(int fd);
// Closes fd through real_close (this rank's) or on its owner, and forgets it.
int program_fd_close(int fd, const std::function<int()> &real_close);

}  // namespace agora
