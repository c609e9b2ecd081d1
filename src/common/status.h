// The library's status vocabulary: the public agora_status_t
// (include/agora/agora.h). Internals return int holding one of its values
// (AGORA_OK, AGORA_ERR_*, the positive outcomes), so a status crosses from a
// service or engine to the application without translation
// (docs/api-conventions.md). AGORA_STATUS_LIST gives each its text
// (agora_strerror).
#pragma once
#include "agora/agora.h"

namespace agora {

// X(public name, what it means): every status, once.
#define AGORA_STATUS_LIST(X)                                                                             \
  X(AGORA_OK, "success")                                                                                 \
  X(AGORA_ERR_NOT_INITIALIZED, "API used before agora_init, after agora_finalize, or in a fork() child") \
  X(AGORA_ERR_INVALID_ARGUMENT, "invalid argument")                                                      \
  X(AGORA_ERR_NO_MEMORY, "global memory exhausted")                                                      \
  X(AGORA_ERR_NOT_HELD, "the lock is not held by this thread")                                           \
  X(AGORA_ERR_BAD_POINTER, "not memory Agora allocated, or already freed")                               \
  X(AGORA_ERR_CONFIG, "bad AGORA_* setting")                                                             \
  X(AGORA_ERR_TRANSPORT, "transport (MPI) failure")                                                      \
  X(AGORA_ERR_DEADLOCK, "the call could never complete (a thread locking a lock it holds)")              \
  X(AGORA_ERR_MISUSE, "a call the caller or the object's state forbids")                                 \
  X(AGORA_BARRIER_SERIAL, "the serial waiter of a thread barrier round")                                 \
  X(AGORA_BUSY, "would have to wait")                                                                    \
  X(AGORA_TIMEDOUT, "the deadline passed")

// "AGORA_ERR_NO_MEMORY: global memory exhausted"; nullptr for a code that
// is no status.
const char *status_text(int code);

}  // namespace agora
