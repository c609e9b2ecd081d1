// The job-wide libc state of program mode: pages of the program's shared
// .bss that the startup object provides (program_start.c's
// agora_libc_pages, placed in the shared window by agora-program.ld) and
// registers before Agora starts (program_libc_start.cpp); they are at the
// same address on every rank. Used by program_random.cpp (the random
// generators, strtok) and program_process_attrs.cpp (environment,
// directory, umask, locale). This file's functions call nothing the
// program-mode link wraps, so that static links of the library (which are
// not program mode) may pull them in.
#pragma once
#include <stdlib.h>

#include <cstddef>
#include <cstdint>

#include "program/program_abi.h"

namespace agora {

// The process attributes' words (program_process_attrs.cpp): `lock`'s
// address names the lock they are written under.
struct AttrsWords {
  uint64_t lock;
  uint64_t generation;  // of the record, one more per change
  void *record;         // in the global heap (nullptr: no change yet)
};

// The job-wide state, in the registered pages (zero at start). One page per
// family, so that threads drawing from one do not take the other's page
// away (sc), and a read-mostly page for what erand48 & co read without a
// lock.
constexpr size_t kPage = 4096;
struct alignas(kPage) RandomFamily {
  uint64_t lock;  // its address names the lock of rand/random
  int32_t ready;  // state holds glibc's default state (set at first use)
  int32_t pad;
  random_data state;
  int32_t table[32];  // glibc's default array: TYPE_3, 128 bytes
};
struct alignas(kPage) Drand48Family {
  uint64_t lock;       // ... of the drand48 family
  drand48_data state;  // zero is glibc's default (the _r functions set a, c)
};
// lcong48's parameters as erand48, nrand48 and jrand48 (which draw from the
// caller's own xsubi) read them without a lock: written after the call that
// set them, outside the lock, so that every protocol shows them to whoever
// synchronises with the caller afterwards (pthreads' rule for data a thread
// writes), as an ordinary write. The process attributes' generation hint
// follows the same rule (program_process_attrs.cpp).
struct alignas(kPage) ReadMostly {
  uint16_t a[3];              // lcong48's multiplier, valid if custom
  uint16_t c;                 // and addend
  uint32_t custom;            // 0: glibc's default parameters
  uint64_t attrs_generation;  // AttrsWords::generation, once released
};
// The process attributes' record, under its lock.
struct alignas(kPage) AttrsPage {
  AttrsWords words;
};
// strtok's saved position: an ordinary variable of the job, as libc's is of
// the process (strtok takes no lock: concurrent use is the program's race).
struct alignas(kPage) StrtokPage {
  char *save;
};
struct LibcState {
  RandomFamily random;
  Drand48Family drand48;
  ReadMostly shared;
  AttrsPage attrs;
  StrtokPage strtok;
};
static_assert(sizeof(LibcState) == AGORA_PROGRAM_LIBC_BYTES, "the startup object's pages hold the state");

// The registered pages (nullptr: none, as in a program not built with
// agoracc's startup object).
LibcState *program_libc_state();
// Called by the startup object's registration: the pages must be
// AGORA_PROGRAM_LIBC_BYTES, page aligned (else a fatal error: a startup
// object of another Agora version).
void program_libc_register(void *pages, size_t bytes);
// At start: the pages lie in the program's shared .bss [bss_lo, bss_hi)
// (else a fatal error naming the mismatch).
void program_libc_check(uintptr_t bss_lo, uintptr_t bss_hi);

// Where a call on libc's state goes now: libc's own (no pages registered,
// or a fork() child), the job's pages under a process-local mutex (Agora
// does not run: before start, after the end), or the job's pages under an
// Agora lock.
enum class LibcWhere { Libc, Local, Job };
LibcWhere program_libc_where();

// A store Agora's code made to global memory inside a lock's span (Agora's
// own code is not instrumented): a program built with store tracing tells
// regc exactly what its spans stored.
void program_libc_stored(const void *address, size_t bytes);
}  // namespace agora
