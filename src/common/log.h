// Diagnostics: every message names its origin rank so a multi-rank job's
// stderr stays readable.
#pragma once
#include <cstdarg>
#include <cstdint>
#include <string>

namespace agora {

// Rank shown in messages; -1 until the runtime knows it.
void log_set_rank(int rank);
// In a process made by fork() from a rank: messages say
// "agora[pid P, forked from rank N]:" instead, so none claims to be the rank.
void log_set_forked_child(int pid);
void log_set_debug(bool enabled);
bool log_debug_enabled();

// "agora[rank N]: <message>" on stderr.
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Prints the message and terminates the whole job with a non-zero status.
[[noreturn]] void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Sets the hook fatal() calls to end every rank (MPI_Abort in the runtime).
void log_set_abort_hook(void (*hook)(int status));
// strerror(err), but safe to call from concurrent threads whatever the C
// library: the text stays valid until this thread's next call.
const char *system_error_text(int err);
// A size for messages: "16.0 TiB".
std::string human_bytes(uint64_t bytes);

}  // namespace agora

// Internal invariant checks; on in debug builds and in the tests.
#ifdef AGORA_CHECKS
#define AGORA_ASSERT(cond) \
  ((cond) ? (void)0 : ::agora::fatal("internal check failed: %s (%s:%d)", #cond, __FILE__, __LINE__))
#else
#define AGORA_ASSERT(cond) ((void)0)
#endif
