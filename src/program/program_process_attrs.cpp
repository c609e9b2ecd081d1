// Process attributes a pthreads program treats as process-wide, made
// job-wide in program mode (issue 26; docs/programs.md, "Process-wide
// state"): the environment (setenv, unsetenv, putenv), the current
// directory (chdir, fchdir), the file mode creation mask (umask) and the
// global locale (setlocale). Each is a process's attribute, held by the
// kernel or by libc on each rank, so a call must take effect on every rank.
//
// Design: a change runs locally, as in one process, and is also written to
// the job's *record* (in global memory, under an address-named Agora lock):
// one entry per environment variable, one for the directory (its absolute
// path after the change, so fchdir and relative paths need nothing more),
// one for the mask, one for the locale (setlocale(LC_ALL, NULL)'s composite
// name after the change), each stamped with the record's generation. A rank
// *catches up* -- replays, in generation order, the entries newer than what
// it has applied -- before a thread starts on it, at every wrapped call of
// these functions (getenv included), and after every pthreads
// synchronisation of the program (mutex lock, barrier, condition and
// semaphore waits, join). The check is one load of a generation hint
// written after the lock's release; only a rank that is behind takes the
// lock.
//
// Ordering guarantee: a change is seen by every thread, on any rank, that
// starts or synchronises with the changing thread after the call (the rule
// pthreads gives for a thread's ordinary writes), and by every later call
// of these functions on the changer's own rank. Two changes made at the same
// time by threads that do not synchronise are a race (as setenv against
// getenv is in libc): both are applied everywhere, but a rank may notice the
// later one only at the next change.
//
// A replay that fails on another rank (the directory or the locale does not
// exist on that host) ends the job with a message naming both.
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "agora/agora.h"
#include "common/log.h"
#include "program/program_abi.h"
#include "program/program_libc.h"
#include "program/program_process_attrs.h"

namespace agora {
int shim_lock_address(const void *address, bool lock);  // agora_c.cpp
}  // namespace agora

extern "C" {
char *__real_getenv(const char *);
char *__real_secure_getenv(const char *);
int __real_setenv(const char *, const char *, int);
int __real_unsetenv(const char *);
int __real_putenv(char *);
int __real_chdir(const char *);
int __real_fchdir(int);
char *__real_getcwd(char *, size_t);
mode_t __real_umask(mode_t);
char *__real_setlocale(int, const char *);
}

namespace {

using agora::LibcWhere;

// One entry of the record. Environment entries are keyed by the variable's
// name; the others have one entry each.
enum class Kind : uint32_t {
  SetVar,     // name=value
  UnsetVar,   // name
  Directory,  // value: the absolute path
  Mask,       // value: the mask, in octal
  Locale,     // value: setlocale(LC_ALL, NULL)'s name
};
struct Entry {
  uint64_t generation = 0;
  Kind kind = Kind::SetVar;
  std::string name, value;
};

// The record in global memory: a header, then per entry its fixed part and
// the name and value with their terminators.
struct RecordHeader {
  uint64_t count;
};
struct EntryHeader {
  uint64_t generation;
  uint32_t kind;
  uint32_t name_bytes;   // with the terminator
  uint32_t value_bytes;  // with the terminator
};

std::vector<Entry> read_record(const void *record) {
  std::vector<Entry> entries;
  if (!record) return entries;
  const char *p = static_cast<const char *>(record);
  RecordHeader header;
  std::memcpy(&header, p, sizeof header);
  p += sizeof header;
  for (uint64_t i = 0; i < header.count; ++i) {
    EntryHeader e;
    std::memcpy(&e, p, sizeof e);
    p += sizeof e;
    Entry entry;
    entry.generation = e.generation;
    entry.kind = static_cast<Kind>(e.kind);
    entry.name.assign(p, e.name_bytes - 1);
    p += e.name_bytes;
    entry.value.assign(p, e.value_bytes - 1);
    p += e.value_bytes;
    entries.push_back(std::move(entry));
  }
  return entries;
}

// A new record in this rank's global heap (the old one is freed).
void *write_record(const std::vector<Entry> &entries) {
  size_t bytes = sizeof(RecordHeader);
  for (const Entry &e : entries) bytes += sizeof(EntryHeader) + e.name.size() + 1 + e.value.size() + 1;
  char *record = static_cast<char *>(agora_program_malloc(bytes));
  if (!record)
    agora::fatal("no global memory for the job's %zu-byte record of environment and process attributes", bytes);
  char *p = record;
  RecordHeader header{entries.size()};
  std::memcpy(p, &header, sizeof header);
  p += sizeof header;
  for (const Entry &e : entries) {
    EntryHeader h{e.generation, static_cast<uint32_t>(e.kind), (uint32_t)e.name.size() + 1,
                  (uint32_t)e.value.size() + 1};
    std::memcpy(p, &h, sizeof h);
    p += sizeof h;
    std::memcpy(p, e.name.c_str(), e.name.size() + 1);
    p += e.name.size() + 1;
    std::memcpy(p, e.value.c_str(), e.value.size() + 1);
    p += e.value.size() + 1;
  }
  agora::program_libc_stored(record, bytes);
  return record;
}

// What this rank has applied (its process's attributes are up to date with
// the record's entries up to this generation), and the mutex that orders
// catching up and changes among this rank's threads (taken before the Agora
// lock).
std::atomic<uint64_t> g_applied{0};  // written under g_rank
std::mutex g_rank;

bool is_environment(Kind k) { return k == Kind::SetVar || k == Kind::UnsetVar; }

// Replays one entry made on another rank on this process.
void replay(const Entry &e) {
  switch (e.kind) {
    case Kind::SetVar:
      __real_setenv(e.name.c_str(), e.value.c_str(), 1);
      break;
    case Kind::UnsetVar:
      __real_unsetenv(e.name.c_str());
      break;
    case Kind::Directory:
      if (__real_chdir(e.value.c_str()) != 0)
        agora::fatal("chdir(\"%s\"), done by the program on another rank, fails on rank %d: %s", e.value.c_str(),
                     agora_rank(), agora::system_error_text(errno));
      break;
    case Kind::Mask:
      __real_umask((mode_t)std::stoul(e.value, nullptr, 8));
      break;
    case Kind::Locale:
      if (!__real_setlocale(LC_ALL, e.value.c_str()))
        agora::fatal(
            "setlocale(LC_ALL, \"%s\"), done by the program on another rank, fails on rank %d (is the locale "
            "installed on every host?)",
            e.value.c_str(), agora_rank());
      break;
  }
}

// With g_rank and the Agora lock held: replays what this rank has not applied.
void catch_up_locked(const agora::AttrsWords *words) {
  if (words->generation == g_applied) return;
  for (const Entry &e : read_record(words->record))
    if (e.generation > g_applied) replay(e);
  g_applied = words->generation;
}

void lock_words(agora::AttrsWords *words, bool lock) {
  if (int status = agora::shim_lock_address(&words->lock, lock))
    agora::fatal("cannot %s the lock of the job's environment and process attributes: %s", lock ? "take" : "release",
                 agora_strerror(status));
}

// The change `entry` (already applied here by the caller, under the locks)
// goes into the record, replacing the entries it makes pointless.
void record_change(agora::AttrsWords *words, Entry entry) {
  std::vector<Entry> entries = read_record(words->record);
  std::vector<Entry> kept;
  for (Entry &e : entries) {
    bool superseded =
        is_environment(entry.kind) ? is_environment(e.kind) && e.name == entry.name : e.kind == entry.kind;
    if (!superseded) kept.push_back(std::move(e));
  }
  entry.generation = words->generation + 1;
  kept.push_back(std::move(entry));
  void *old = words->record;
  words->record = write_record(kept);
  words->generation += 1;
  agora::program_libc_stored(words, sizeof *words);
  if (old) agora_program_free(old);
  g_applied = words->generation;
}

// Runs change() (the real call) with this rank caught up, and records what
// describe() says it did (nothing if it returns false). Outside the job
// (before Agora runs, after its end, in a fork() child) only the real call.
template <typename Change, typename Describe>
auto change_attrs(Change change, Describe describe) -> decltype(change()) {
  if (agora::program_libc_where() != LibcWhere::Job) return change();
  agora::AttrsWords *words = &agora::program_libc_state()->attrs.words;
  std::lock_guard<std::mutex> rank_guard(g_rank);
  lock_words(words, true);
  catch_up_locked(words);
  auto result = change();
  int error = errno;  // the call's, for the program
  Entry entry;
  bool changed = describe(result, &entry);
  if (changed) record_change(words, std::move(entry));
  uint64_t generation = words->generation;
  lock_words(words, false);
  // After the release: whoever synchronises with this thread from now on
  // sees it (ReadMostly in program_libc.h).
  if (changed) __atomic_store_n(&agora::program_libc_state()->shared.attrs_generation, generation, __ATOMIC_RELAXED);
  errno = error;
  return result;
}

std::string current_directory() {
  std::vector<char> buffer(PATH_MAX);
  while (!__real_getcwd(buffer.data(), buffer.size())) {
    if (errno != ERANGE)
      agora::fatal("getcwd after the program's chdir failed: %s (the other ranks cannot follow)",
                   agora::system_error_text(errno));
    buffer.resize(buffer.size() * 2);
  }
  return buffer.data();
}

}  // namespace

namespace agora {
void program_attrs_catch_up() {
  LibcState *state = program_libc_state();
  if (!state ||
      __atomic_load_n(&state->shared.attrs_generation, __ATOMIC_RELAXED) == g_applied.load(std::memory_order_relaxed))
    return;
  if (program_libc_where() != LibcWhere::Job) return;
  AttrsWords *words = &state->attrs.words;
  std::lock_guard<std::mutex> rank_guard(g_rank);
  lock_words(words, true);
  catch_up_locked(words);
  lock_words(words, false);
}
}  // namespace agora

extern "C" {

char *__wrap_getenv(const char *name) {
  agora::program_attrs_catch_up();
  return __real_getenv(name);
}

char *__wrap_secure_getenv(const char *name) {
  agora::program_attrs_catch_up();
  return __real_secure_getenv(name);
}

int __wrap_setenv(const char *name, const char *value, int overwrite) {
  return change_attrs([=] { return __real_setenv(name, value, overwrite); },
                      [=](int status, Entry *e) {
                        const char *now = status == 0 ? __real_getenv(name) : nullptr;
                        if (!now) return false;  // refused (errno set)
                        e->kind = Kind::SetVar;
                        e->name = name;
                        e->value = now;  // overwrite == 0 keeps an existing value: that one
                        return true;
                      });
}

int __wrap_unsetenv(const char *name) {
  return change_attrs([=] { return __real_unsetenv(name); },
                      [=](int status, Entry *e) {
                        if (status != 0) return false;
                        e->kind = Kind::UnsetVar;
                        e->name = name;
                        return true;
                      });
}

// The other ranks get a copy of the string's text (setenv): the program's
// string itself may be memory they cannot read, or gone when the rank's
// libraries read the environment at the job's end.
int __wrap_putenv(char *string) {
  return change_attrs([=] { return __real_putenv(string); },
                      [=](int status, Entry *e) {
                        if (status != 0) return false;
                        const char *eq = std::strchr(string, '=');
                        e->name = eq ? std::string(string, eq - string) : std::string(string);
                        e->kind = eq ? Kind::SetVar : Kind::UnsetVar;  // glibc: putenv("NAME") removes NAME
                        if (eq) e->value = eq + 1;
                        return true;
                      });
}

int __wrap_chdir(const char *path) {
  return change_attrs([=] { return __real_chdir(path); },
                      [](int status, Entry *e) {
                        if (status != 0) return false;
                        e->kind = Kind::Directory;
                        e->value = current_directory();
                        return true;
                      });
}

int __wrap_fchdir(int fd) {
  return change_attrs([=] { return __real_fchdir(fd); },
                      [](int status, Entry *e) {
                        if (status != 0) return false;
                        e->kind = Kind::Directory;
                        e->value = current_directory();
                        return true;
                      });
}

char *__wrap_getcwd(char *buffer, size_t size) {
  agora::program_attrs_catch_up();
  return __real_getcwd(buffer, size);
}

mode_t __wrap_umask(mode_t mask) {
  return change_attrs([=] { return __real_umask(mask); },
                      [=](mode_t, Entry *e) {
                        char octal[16];
                        std::snprintf(octal, sizeof octal, "%o", (unsigned)(mask & 0777));
                        e->kind = Kind::Mask;
                        e->value = octal;
                        return true;
                      });
}

char *__wrap_setlocale(int category, const char *locale) {
  if (!locale) {  // a query
    agora::program_attrs_catch_up();
    return __real_setlocale(category, nullptr);
  }
  return change_attrs([=] { return __real_setlocale(category, locale); },
                      [](char *result, Entry *e) {
                        if (!result) return false;
                        e->kind = Kind::Locale;
                        e->value = __real_setlocale(LC_ALL, nullptr);  // a query: result stays valid
                        return true;
                      });
}

}  // extern "C"
