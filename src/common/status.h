// The library's status vocabulary. Every internal status is one of the
// public agora_status_t values (include/agora/agora.h), so a status crosses
// from a service or engine to the application without translation; Status
// names them inside the library and AGORA_STATUS_LIST ties each to its
// public name, its text (agora_strerror) and a compile-time check that the
// two enums stay in step.
#pragma once
#include "agora/agora.h"

namespace agora {

enum class Status : int {
  Ok = 0,
  NotInitialized = -1,
  InvalidArgument = -2,
  NoMemory = -3,
  NotHeld = -4,
  BadPointer = -5,
  Config = -6,
  Transport = -7,
  Deadlock = -8,
  Misuse = -9,
  BarrierSerial = 1,
  Busy = 2,
  TimedOut = 3,
};

// X(internal name, public name, what it means): every status, once.
#define AGORA_STATUS_LIST(X)                                                                        \
  X(Ok, AGORA_OK, "success")                                                                        \
  X(NotInitialized, AGORA_ERR_NOT_INITIALIZED,                                                      \
    "API used before agora_init, after agora_finalize, or in a fork() child")                      \
  X(InvalidArgument, AGORA_ERR_INVALID_ARGUMENT, "invalid argument")                                \
  X(NoMemory, AGORA_ERR_NO_MEMORY, "global memory exhausted")                                       \
  X(NotHeld, AGORA_ERR_NOT_HELD, "the lock is not held by this thread")                             \
  X(BadPointer, AGORA_ERR_BAD_POINTER, "not memory Agora allocated, or already freed")              \
  X(Config, AGORA_ERR_CONFIG, "bad AGORA_* setting")                                                \
  X(Transport, AGORA_ERR_TRANSPORT, "transport (MPI) failure")                                      \
  X(Deadlock, AGORA_ERR_DEADLOCK, "the call could never complete (a thread locking a lock it holds)") \
  X(Misuse, AGORA_ERR_MISUSE, "called from a thread that may not make this call")                   \
  X(BarrierSerial, AGORA_BARRIER_SERIAL, "the serial waiter of a thread barrier round")             \
  X(Busy, AGORA_BUSY, "would have to wait")                                                         \
  X(TimedOut, AGORA_TIMEDOUT, "the deadline passed")

#define AGORA_STATUS_SAME(internal, pub, text)                                                      \
  static_assert(static_cast<int>(Status::internal) == (pub), #pub " and Status::" #internal " differ");
AGORA_STATUS_LIST(AGORA_STATUS_SAME)
#undef AGORA_STATUS_SAME

// The public code of a status (what API functions return).
constexpr int status_code(Status s) { return static_cast<int>(s); }

// "AGORA_ERR_NO_MEMORY: global memory exhausted"; nullptr for a code that
// is no status.
const char *status_text(int code);

}  // namespace agora
