// Thread-specific data in program mode (docs/programs.md): pthread_key_*,
// pthread_{get,set}specific and C11's tss_* of the program, wrapped (ld
// --wrap, src/program/agora-program.wrap), so that a key made by any thread
// on any rank is a key on every rank.
//
// Keys are job-wide: the table of keys (struct agora_program_key,
// program_abi.h) is in global memory, in the startup object's shared
// section, and is read and written only under the address-named Agora lock
// of the table: creation and deletion carry the lock's consistency under
// every protocol. A key is (generation << 10) | slot with generation >= 1,
// so every key is >= 1024 and never one of libc's (0..1023): keys libc made
// (before Agora started) keep going to libc, decided by the value alone.
//
// Values are per thread, as POSIX has them: a private array per OS thread
// (allocated at its first setspecific), each entry tagged with the full key,
// so a value set for a deleted key is not the value of a later key made in
// the same slot. get and set touch no global memory and take no lock.
//
// Destructors run on the thread's own rank when it ends, up to
// PTHREAD_DESTRUCTOR_ITERATIONS rounds, without any lock held: for an agora
// thread at the end of its body (the runtime's body-end hook), before it
// counts as ended, so pthread_join returns after them; for any other thread
// that set a value (a thread a library started) when libc ends it, through
// one libc key per rank. main's values get none when main returns (exit
// runs no destructors), but do when it calls pthread_exit. A destructor is
// stored as (module, offset), as thread functions travel: an address in the
// executable is the same on every rank (program mode links it non-PIE at a
// fixed address, checked at start), so it is kept as it is; one in a shared
// library (ASLR puts each elsewhere on each rank) is found again on the
// thread's rank by the library's name and the offset in it.
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <threads.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agora/agora.h"
#include "common/log.h"
#include "platform/platform.h"
#include "program/program_abi.h"
#include "program/program_state.h"
#include "runtime/global_stacks.h"
#include "runtime/store_trace.h"

namespace agora {
bool shim_runtime_live();                               // agora_c.cpp
int shim_lock_address(const void *address, bool lock);  // agora_c.cpp
}  // namespace agora

extern "C" {
int __real_pthread_key_create(pthread_key_t *, void (*)(void *));
int __real_pthread_key_delete(pthread_key_t);
void *__real_pthread_getspecific(pthread_key_t);
int __real_pthread_setspecific(pthread_key_t, const void *);
int __real_tss_create(tss_t *, tss_dtor_t);
void __real_tss_delete(tss_t);
void *__real_tss_get(tss_t);
int __real_tss_set(tss_t, void *);
int __wrap_pthread_once(pthread_once_t *, void (*)(void));  // pthread_shim.cpp
}

static_assert(sizeof(tss_t) == sizeof(pthread_key_t), "C11's tss_t is a pthread key in glibc");
static_assert(sizeof(once_flag) == sizeof(pthread_once_t), "C11's once_flag is a pthread_once_t in glibc");
static_assert(AGORA_PROGRAM_KEYS == PTHREAD_KEYS_MAX, "as many keys as libc allows");

namespace {

constexpr uint32_t kSlotBits = 10;
static_assert((1u << kSlotBits) == AGORA_PROGRAM_KEYS, "a key's slot is its low bits");
constexpr uint32_t kMaxGeneration = (1u << (32 - kSlotBits)) - 1;

agora_program_key *g_table = nullptr;  // in global memory (program mode only)

bool keys_active() { return g_table && agora::shim_runtime_live(); }
bool ours(pthread_key_t key) { return key >= AGORA_PROGRAM_KEYS; }
uint32_t slot_of(pthread_key_t key) { return key & (AGORA_PROGRAM_KEYS - 1); }
uint32_t generation_of(pthread_key_t key) { return key >> kSlotBits; }

// A store to the table inside its lock's span (for regc with store tracing).
template <typename T>
void store(T *field, T value) {
  *field = value;
  if (agora::store_trace_active()) agora::store_trace_record(field, sizeof *field);
}

struct TableLock {
  int status;
  TableLock() : status(agora::shim_lock_address(g_table, true)) {}
  ~TableLock() {
    if (status == AGORA_OK) agora::shim_lock_address(g_table, false);
  }
};

// ---- per-thread values ---------------------------------------------------------
struct Value {
  pthread_key_t key;  // the key the value was set for
  void *value;
};
struct Values {
  Value v[AGORA_PROGRAM_KEYS];
};
thread_local Values *t_values = nullptr;

pthread_once_t g_exit_key_once = PTHREAD_ONCE_INIT;
pthread_key_t g_exit_key;  // libc's: its destructor ends a thread's values
void values_exit(void *values);
void body_end(bool exited);
void make_exit_key() {
  if (int err = pthread_key_create(&g_exit_key, values_exit))
    agora::fatal("cannot create the thread-specific data key of this rank: %s", strerror(err));
}

Values *values_here() {
  if (t_values) return t_values;
  pthread_once(&g_exit_key_once, make_exit_key);
  agora::set_body_end_hook(body_end);  // on this rank, before the first value
  auto *values = static_cast<Values *>(calloc(1, sizeof(Values)));
  if (!values) return nullptr;
  pthread_setspecific(g_exit_key, values);
  t_values = values;
  return values;
}

// The destructor of a live key (nullptr: none, or the key was deleted). The
// table lock is held.
using Destructor = void (*)(void *);
Destructor destructor_of(pthread_key_t key) {
  const agora_program_key &e = g_table[slot_of(key)];
  if (!e.in_use || e.generation != generation_of(key) || !e.destructor) return nullptr;
  if (!e.module) return reinterpret_cast<Destructor>(static_cast<uintptr_t>(e.destructor));
  std::string error;
  void *code = agora::platform::code_ref_to_address(e.module, e.destructor, &error);
  if (!code) agora::log_error("a thread-specific data destructor cannot be run on this rank: %s", error.c_str());
  return reinterpret_cast<Destructor>(code);
}

// POSIX's thread end: each non-NULL value is set to NULL and its key's
// destructor called with it, again while destructors set new values, at
// most PTHREAD_DESTRUCTOR_ITERATIONS rounds.
void run_destructors(Values *values) {
  struct Call {
    pthread_key_t key;
    void *value;
    Destructor fn;
  };
  std::vector<Call> calls;
  for (int round = 0; round < PTHREAD_DESTRUCTOR_ITERATIONS; ++round) {
    calls.clear();
    for (Value &v : values->v) {
      if (v.value) calls.push_back({v.key, v.value, nullptr});
      v.value = nullptr;
    }
    if (calls.empty() || !keys_active()) return;
    {
      TableLock lock;  // one acquire per round, none held while destructors run
      if (lock.status != AGORA_OK) return;
      for (Call &c : calls) c.fn = destructor_of(c.key);
    }
    for (const Call &c : calls)
      if (c.fn) c.fn(c.value);
  }
  for (Value &v : values->v) v.value = nullptr;  // still set after the last round: dropped, as glibc does
}

// libc's destructor of a thread's values: every thread that set one, when
// libc ends it (an agora thread's have run already, at its body's end).
void values_exit(void *values) {
  run_destructors(static_cast<Values *>(values));
  if (t_values == values) t_values = nullptr;
  free(values);
}

// The runtime's body-end hook: an agora thread (or main through
// pthread_exit) ends.
void body_end(bool exited) {
  if (agora::program_in_main() && !exited) return;  // main returned: exit() runs no destructors
  if (t_values) run_destructors(t_values);
}

int key_create(pthread_key_t *key, Destructor destructor) {
  std::string module, error;
  uint64_t offset = 0;
  if (destructor && !agora::platform::code_ref_from_address((const void *)destructor, &module, &offset, &error)) {
    agora::log_error("pthread_key_create: the destructor %p cannot be called on other ranks: %s", (void *)destructor,
                     error.c_str());
    return EINVAL;
  }
  char *module_copy = nullptr;  // global memory, so that every rank reads it
  if (!module.empty()) {
    void *block = nullptr;
    if (agora_mem_malloc(module.size() + 1, &block) != AGORA_OK) return ENOMEM;
    module_copy = static_cast<char *>(block);
    memcpy(module_copy, module.c_str(), module.size() + 1);
  }
  TableLock lock;
  if (lock.status != AGORA_OK) {
    if (module_copy) agora_mem_free(module_copy);
    return EAGAIN;
  }
  for (uint32_t slot = 0; slot < AGORA_PROGRAM_KEYS; ++slot) {
    agora_program_key &e = g_table[slot];
    if (e.in_use) continue;
    uint32_t generation = e.generation >= kMaxGeneration ? 1 : e.generation + 1;
    store(&e.generation, generation);
    store(&e.in_use, 1u);
    store(&e.destructor, destructor ? offset : 0);
    store(&e.module, module_copy);
    *key = (generation << kSlotBits) | slot;
    return 0;
  }
  if (module_copy) agora_mem_free(module_copy);
  return EAGAIN;  // PTHREAD_KEYS_MAX keys exist
}

int key_delete(pthread_key_t key) {
  char *module = nullptr;
  {
    TableLock lock;
    if (lock.status != AGORA_OK) return EINVAL;
    agora_program_key &e = g_table[slot_of(key)];
    if (!e.in_use || e.generation != generation_of(key)) return EINVAL;
    module = e.module;
    store(&e.in_use, 0u);
    store(&e.destructor, uint64_t{0});
    store(&e.module, static_cast<char *>(nullptr));
  }
  if (module) agora_mem_free(module);
  return 0;
}

}  // namespace

extern "C" {

void agora_program_keys(struct agora_program_key *table) { g_table = table; }

int __wrap_pthread_key_create(pthread_key_t *key, void (*destructor)(void *)) {
  if (!keys_active()) return __real_pthread_key_create(key, destructor);
  return key_create(key, destructor);
}

int __wrap_pthread_key_delete(pthread_key_t key) {
  if (!ours(key)) return __real_pthread_key_delete(key);
  return key_delete(key);
}

// No check that the key exists (that would read the table under its lock):
// a key never made, or deleted, reads NULL and stores a value no destructor
// sees.
void *__wrap_pthread_getspecific(pthread_key_t key) {
  if (!ours(key)) return __real_pthread_getspecific(key);
  Values *values = t_values;
  if (!values) return nullptr;
  const Value &v = values->v[slot_of(key)];
  return v.key == key ? v.value : nullptr;
}

int __wrap_pthread_setspecific(pthread_key_t key, const void *value) {
  if (!ours(key)) return __real_pthread_setspecific(key, value);
  Values *values = values_here();
  if (!values) return ENOMEM;
  values->v[slot_of(key)] = Value{key, const_cast<void *>(value)};
  return 0;
}

// C11 (glibc implements them over pthread keys and pthread_once, but calls
// those inside libc, where the wraps do not reach).
int __wrap_tss_create(tss_t *id, tss_dtor_t destructor) {
  if (!keys_active()) return __real_tss_create(id, destructor);
  return key_create(id, destructor) == 0 ? thrd_success : thrd_error;
}

void __wrap_tss_delete(tss_t id) {
  if (!ours(id)) return __real_tss_delete(id);
  key_delete(id);
}

void *__wrap_tss_get(tss_t id) {
  if (!ours(id)) return __real_tss_get(id);
  return __wrap_pthread_getspecific(id);
}

int __wrap_tss_set(tss_t id, void *value) {
  if (!ours(id)) return __real_tss_set(id, value);
  return __wrap_pthread_setspecific(id, value) == 0 ? thrd_success : thrd_error;
}

// Once per job, as pthread_once (which takes libc's path for a flag outside
// global memory).
void __wrap_call_once(once_flag *flag, void (*init)(void)) {
  __wrap_pthread_once(reinterpret_cast<pthread_once_t *>(flag), init);
}

}  // extern "C"
