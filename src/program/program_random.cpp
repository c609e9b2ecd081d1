// The random generators and strtok of a program in program mode, made
// job-wide (issue 26; docs/programs.md, "Process-wide state"). libc's own
// variables are private to each rank (a shared library's data), so a
// generator seeded by main on rank 0 would be unseeded on rank 1.
//
// rand, srand, random, srandom, initstate, setstate and the drand48 family
// of the program's own code (redirected by `ld --wrap`, agora-program.wrap)
// work on one state in the job's libc pages (program_libc.h), with glibc's
// reentrant functions (random_r, drand48_r, ...), so every rank draws from
// the one sequence a single process would give, value for value. Each
// family is guarded by an address-named Agora lock (a word of its page): a
// call is a lock acquire and release, which also carries the state's
// consistency under every protocol. erand48, nrand48 and jrand48 draw from
// the caller's own xsubi and only read lcong48's parameters: they take no
// lock (ReadMostly, program_libc.h). strtok keeps its position in the pages
// too, without a lock, as libc keeps it in an ordinary static. Before Agora
// runs (constructors of priority 101) and after the job has ended (rank 0's
// exit handlers) a process-local mutex guards the same state; in a fork()
// child the calls go to libc's own.
#include "program/program_libc.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "agora/agora.h"
#include "common/log.h"

namespace agora {
int shim_lock_address(const void *address, bool lock);  // agora_c.cpp
}  // namespace agora

extern "C" {
int __real_rand(void);
void __real_srand(unsigned);
long __real_random(void);
void __real_srandom(unsigned);
char *__real_initstate(unsigned, char *, size_t);
char *__real_setstate(char *);
double __real_drand48(void);
double __real_erand48(unsigned short[3]);
long __real_lrand48(void);
long __real_nrand48(unsigned short[3]);
long __real_mrand48(void);
long __real_jrand48(unsigned short[3]);
void __real_srand48(long);
unsigned short *__real_seed48(unsigned short[3]);
void __real_lcong48(unsigned short[7]);
char *__real_strtok(char *, const char *);
}

namespace {

std::mutex g_local;  // while Agora does not run: before start, after the end

using agora::Drand48Family;
using agora::LibcState;
using agora::RandomFamily;
using agora::ReadMostly;
using Where = agora::LibcWhere;
LibcState *state() { return agora::program_libc_state(); }
Where where() { return agora::program_libc_where(); }
void stored(const void *address, size_t bytes) { agora::program_libc_stored(address, bytes); }

// body() on the state, under the family's lock (Where::Job or Local).
template <typename F>
auto locked(Where w, uint64_t *lock, F body) -> decltype(body(state())) {
  if (w == Where::Local) {
    std::lock_guard<std::mutex> guard(g_local);
    return body(state());
  }
  if (int status = agora::shim_lock_address(lock, true))
    agora::fatal("cannot take the lock of libc's job-wide state: %s", agora_strerror(status));
  auto result = body(state());
  agora::shim_lock_address(lock, false);
  return result;
}

// ---- random / rand ---------------------------------------------------------
// The array random uses ([-1] is its type and position word, which setstate
// and initstate write), for store tracing.
void stored_random(RandomFamily *f) {
  stored(f, offsetof(RandomFamily, table));
  const random_data &r = f->state;
  if (r.state) stored(r.state - 1, (size_t)((const char *)r.end_ptr - (const char *)(r.state - 1)));
}

// glibc's default state: what initstate(1, table, 128) gives (its static
// table is that state, so rand() without srand draws as after srand(1)).
random_data *random_state(RandomFamily *f) {
  if (!f->ready) {
    initstate_r(1, (char *)f->table, sizeof f->table, &f->state);
    f->ready = 1;
  }
  return &f->state;
}

template <typename F>
auto with_random(Where w, F body) -> decltype(body(&state()->random)) {
  return locked(w, &state()->random.lock, [&](LibcState *s) {
    auto result = body(&s->random);
    stored_random(&s->random);
    return result;
  });
}

long draw_random() {
  Where w = where();
  if (w == Where::Libc) return __real_random();
  return with_random(w, [](RandomFamily *f) {
    int32_t v = 0;
    random_r(random_state(f), &v);
    return (long)v;
  });
}

void seed_random(unsigned seed) {
  Where w = where();
  if (w == Where::Libc) return __real_srandom(seed);
  with_random(w, [seed](RandomFamily *f) { return srandom_r(seed, random_state(f)); });
}

// ---- the drand48 family -------------------------------------------------------
template <typename F>
auto with_drand48(Where w, F body) -> decltype(body(&state()->drand48.state)) {
  return locked(w, &state()->drand48.lock, [&](LibcState *s) {
    auto result = body(&s->drand48.state);
    stored(&s->drand48, sizeof s->drand48);
    return result;
  });
}

// After a call that set the parameters (lcong48; srand48 and seed48 restore
// glibc's), outside the lock: see ReadMostly.
void publish_parameters(bool custom, const unsigned short *param) {
  ReadMostly &r = state()->shared;
  if (!custom) {
    if (r.custom) r.custom = 0;  // no write (no page traffic) while it is the default
    return;
  }
  std::memcpy(r.a, param + 3, sizeof r.a);  // param: x[3], a[3], c
  r.c = param[6];
  r.custom = 1;
}

// The parameters erand48 & co use: glibc's defaults (set by the _r
// functions on a zero buffer) or lcong48's.
drand48_data parameters() {
  drand48_data d;
  std::memset(&d, 0, sizeof d);
  const ReadMostly &r = state()->shared;
  if (r.custom) {
    d.__a = (unsigned long long)r.a[2] << 32 | (unsigned long long)r.a[1] << 16 | r.a[0];
    d.__c = r.c;
    d.__init = 1;
  }
  return d;
}

}  // namespace

extern "C" {

int __wrap_rand(void) { return (int)draw_random(); }
long __wrap_random(void) { return draw_random(); }
void __wrap_srand(unsigned seed) { seed_random(seed); }
void __wrap_srandom(unsigned seed) { seed_random(seed); }

// Both return the array the state was in ([-1] of the state), as glibc's do.
char *__wrap_initstate(unsigned seed, char *array, size_t bytes) {
  Where w = where();
  if (w == Where::Libc) return __real_initstate(seed, array, bytes);
  return with_random(w, [=](RandomFamily *f) -> char * {
    random_data *r = random_state(f);
    char *old = (char *)(r->state - 1);
    stored(old, sizeof(int32_t));  // initstate_r saves the old array's position there
    return initstate_r(seed, array, bytes, r) == 0 ? old : nullptr;
  });
}

char *__wrap_setstate(char *array) {
  Where w = where();
  if (w == Where::Libc) return __real_setstate(array);
  return with_random(w, [=](RandomFamily *f) -> char * {
    random_data *r = random_state(f);
    char *old = (char *)(r->state - 1);
    stored(old, sizeof(int32_t));
    return setstate_r(array, r) == 0 ? old : nullptr;
  });
}

double __wrap_drand48(void) {
  Where w = where();
  if (w == Where::Libc) return __real_drand48();
  return with_drand48(w, [](drand48_data *d) {
    double v = 0;
    drand48_r(d, &v);
    return v;
  });
}

long __wrap_lrand48(void) {
  Where w = where();
  if (w == Where::Libc) return __real_lrand48();
  return with_drand48(w, [](drand48_data *d) {
    long v = 0;
    lrand48_r(d, &v);
    return v;
  });
}

long __wrap_mrand48(void) {
  Where w = where();
  if (w == Where::Libc) return __real_mrand48();
  return with_drand48(w, [](drand48_data *d) {
    long v = 0;
    mrand48_r(d, &v);
    return v;
  });
}

// The caller's own xsubi with the job's parameters: no lock (see ReadMostly).
double __wrap_erand48(unsigned short xsubi[3]) {
  if (where() == Where::Libc) return __real_erand48(xsubi);
  drand48_data d = parameters();
  double v = 0;
  erand48_r(xsubi, &d, &v);
  return v;
}

long __wrap_nrand48(unsigned short xsubi[3]) {
  if (where() == Where::Libc) return __real_nrand48(xsubi);
  drand48_data d = parameters();
  long v = 0;
  nrand48_r(xsubi, &d, &v);
  return v;
}

long __wrap_jrand48(unsigned short xsubi[3]) {
  if (where() == Where::Libc) return __real_jrand48(xsubi);
  drand48_data d = parameters();
  long v = 0;
  jrand48_r(xsubi, &d, &v);
  return v;
}

void __wrap_srand48(long seed) {
  Where w = where();
  if (w == Where::Libc) return __real_srand48(seed);
  with_drand48(w, [=](drand48_data *d) { return srand48_r(seed, d); });
  publish_parameters(false, nullptr);
}

// Returns the previous seed, kept in the job's state (glibc's is in libc's).
unsigned short *__wrap_seed48(unsigned short seed[3]) {
  Where w = where();
  if (w == Where::Libc) return __real_seed48(seed);
  unsigned short *old = with_drand48(w, [=](drand48_data *d) -> unsigned short * {
    seed48_r(seed, d);
    return d->__old_x;
  });
  publish_parameters(false, nullptr);
  return old;
}

void __wrap_lcong48(unsigned short param[7]) {
  Where w = where();
  if (w == Where::Libc) return __real_lcong48(param);
  with_drand48(w, [=](drand48_data *d) { return lcong48_r(param, d); });
  publish_parameters(true, param);
}

// strtok: its saved position in the job's page, no lock (see StrtokPage).
char *__wrap_strtok(char *s, const char *delim) {
  if (where() == Where::Libc) return __real_strtok(s, delim);
  char **save = &state()->strtok.save;
  char *token = strtok_r(s, delim, save);
  stored(save, sizeof *save);
  return token;
}

}  // extern "C"
