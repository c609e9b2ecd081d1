// The C API: argument checks and the "not initialised" guard, then the runtime.
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "agora/agora.h"
#include "api/private_stack.h"
#include "common/log.h"
#include "program/program_state.h"
#include "runtime/runtime.h"
#include "sync/trylock_spin.h"

using agora::Runtime;

namespace {
Runtime *g_rt = nullptr;
// Set by agora_finalize: Agora, like MPI, starts once per process.
bool g_finalized = false;

bool forked_child(const char *fn) {
  if (!Runtime::in_forked_child()) return false;
  agora::log_error(
      "%s called in a process made by fork(): it is not an Agora rank (only the "
      "processes agorarun starts are); global memory and the API are not available "
      "in it",
      fn);
  return true;
}

Runtime *live(const char *fn) {
  if (forked_child(fn)) return nullptr;
  if (!g_rt) agora::log_error("%s called %s", fn, g_finalized ? "after agora_finalize" : "before agora_init");
  return g_rt;
}
}  // namespace

namespace agora {
namespace {
thread_local TrylockSpin t_trylock_spin;
}  // namespace
// A trylock the program asked for (agora_trylock, pthread_mutex_trylock,
// pthread_spin_trylock): a thread that keeps coming straight back to the
// same lock is busy-waiting, and naps (sync/trylock_spin.h) so that the
// holder and the service thread get the cores. The timed waits' own tries
// nap already.
int program_trylock(Runtime *rt, uint64_t key) {
  if (uint32_t nap = t_trylock_spin.before_try(key, platform::now_seconds() * 1e6)) platform::sleep_us(nap);
  int status = rt->trylock(key);
  t_trylock_spin.after_try(platform::now_seconds() * 1e6);
  return status;
}
// For the pthreads shim (pthread_shim.cpp).
bool shim_runtime_live() { return g_rt && !Runtime::in_forked_child(); }
int shim_lock_address(const void *address, bool lock) {
  AGORA_ON_PRIVATE_STACK(shim_lock_address(address, lock));
  if (!g_rt) return AGORA_ERR_NOT_INITIALIZED;
  return lock ? g_rt->lock((uint64_t)(uintptr_t)address) : g_rt->unlock((uint64_t)(uintptr_t)address);
}
int shim_trylock_address(const void *address, bool program_try) {
  AGORA_ON_PRIVATE_STACK(shim_trylock_address(address, program_try));
  if (!g_rt) return AGORA_ERR_NOT_INITIALIZED;
  uint64_t key = (uint64_t)(uintptr_t)address;
  return program_try ? program_trylock(g_rt, key) : g_rt->trylock(key);
}
bool shim_holds_address(const void *address) {
  AGORA_ON_PRIVATE_STACK(shim_holds_address(address));
  return g_rt && g_rt->holds_lock((uint64_t)(uintptr_t)address);
}
void shim_nap(double seconds) {
  AGORA_ON_PRIVATE_STACK(shim_nap(seconds));
  if (seconds > 0) agora::platform::sleep_us((uint32_t)(seconds * 1e6) + 1);
}
Runtime *api_runtime() { return g_rt; }
// Program mode's start-up (program_mode.cpp) runs this where agora_init
// publishes the runtime, before the start-up barrier: threads placed here
// may run from then on, and their malloc must already be global.
void (*g_on_publish)(Runtime *) = nullptr;
}  // namespace agora

#define RUNTIME_OR(fn, fail) \
  Runtime *rt = live(fn);    \
  if (!rt) return fail

extern "C" {

int agora_init(int *argc, char ***argv) {
  if (forked_child("agora_init")) return AGORA_ERR_NOT_INITIALIZED;
  if (g_rt && agora::program_started()) return AGORA_OK;  // started before main
  if (g_rt) {
    agora::log_error("agora_init called twice");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  if (g_finalized) {
    // MPI cannot be initialised again either; its own message would be the
    // only one, followed by an abort.
    agora::log_error(
        "agora_init called after agora_finalize: Agora starts once per process (as MPI does); "
        "call agora_finalize only when the program is done with Agora");
    return AGORA_ERR_MISUSE;
  }
  int status = AGORA_OK;
  Runtime *rt = Runtime::start(argc, argv, &status, [](Runtime *started) {
    g_rt = started;
    if (agora::g_on_publish) agora::g_on_publish(started);
  });
  // NOLINTNEXTLINE(concurrency-mt-unsafe): start-up, before the program's threads exist
  if (!rt) std::exit(2);  // a bad configuration must not leave ranks running
  return status;
}

int agora_finalize(void) {
  if (agora::program_started() && !agora::program_finishing()) return AGORA_OK;  // at exit
  AGORA_ON_PRIVATE_STACK(agora_finalize());
  RUNTIME_OR("agora_finalize", AGORA_ERR_NOT_INITIALIZED);
  int status = rt->stop();
  g_rt = nullptr;
  g_finalized = true;
  return status;
}

int agora_rank(void) {
  RUNTIME_OR("agora_rank", -1);
  return rt->rank();
}

int agora_nranks(void) {
  RUNTIME_OR("agora_nranks", -1);
  return rt->compute_nranks();
}

double agora_wtime(void) { return agora::platform::now_seconds(); }

// The API casts its enums to the runtime's: they must stay in step.
static_assert((int)agora::Placement::Block == AGORA_PLACE_BLOCK &&
                  (int)agora::Placement::Cyclic == AGORA_PLACE_CYCLIC &&
                  (int)agora::Placement::OnRank == AGORA_PLACE_RANK,
              "agora_placement_t and agora::Placement differ");
static_assert((int)agora::ReduceType::Int64 == AGORA_INT64 && (int)agora::ReduceType::Double == AGORA_DOUBLE,
              "agora_type_t and agora::ReduceType differ");
static_assert((int)agora::ReduceOp::Sum == AGORA_SUM && (int)agora::ReduceOp::Min == AGORA_MIN &&
                  (int)agora::ReduceOp::Max == AGORA_MAX,
              "agora_op_t and agora::ReduceOp differ");

// A placement and rank agora_alloc_placed/agora_malloc_placed accept; the
// rank is 0 unless the placement names one.
static bool placement_valid(Runtime *rt, const char *fn, agora_placement_t placement, int *rank) {
  if (placement != AGORA_PLACE_BLOCK && placement != AGORA_PLACE_CYCLIC && placement != AGORA_PLACE_RANK) {
    agora::log_error("%s: placement %d is not AGORA_PLACE_BLOCK, _CYCLIC or _RANK", fn, (int)placement);
    return false;
  }
  if (placement == AGORA_PLACE_RANK && (*rank < 0 || *rank >= rt->compute_nranks())) {
    agora::log_error("%s: rank %d is not between 0 and %d", fn, *rank, rt->compute_nranks() - 1);
    return false;
  }
  if (placement == AGORA_PLACE_RANK && rt->space().servers() > 0) {
    agora::log_error(
        "%s: placement on rank %d refused: with memory servers (AGORA_MEMORY_SERVERS=%d) "
        "all global memory is homed on the servers, striped; use AGORA_PLACE_BLOCK or _CYCLIC",
        fn, *rank, (int)rt->space().servers());
    return false;
  }
  if (placement != AGORA_PLACE_RANK) *rank = 0;
  return true;
}

// The out-parameter of an allocation: NULL is AGORA_ERR_INVALID_ARGUMENT
// (nowhere to put the result); otherwise cleared first, so that it is NULL
// whatever the failure.
static bool out_param(const char *fn, void **out) {
  if (!out) {
    agora::log_error("%s: out is NULL (the pointer comes back through it)", fn);
    return false;
  }
  *out = nullptr;
  return true;
}

// The status of an allocation that returned nothing: the runtime has said
// why on stderr. Every way it fails after the checks above is a lack of
// memory (or of its records), or a size too large for the region.
static agora_status_t allocated(void *p, void **out) {
  *out = p;
  return p ? AGORA_OK : AGORA_ERR_NO_MEMORY;
}

agora_status_t agora_mem_alloc(size_t bytes, void **out) {
  return agora_mem_alloc_placed(bytes, AGORA_PLACE_BLOCK, 0, out);
}

agora_status_t agora_mem_alloc_placed(size_t bytes, agora_placement_t placement, int rank, void **out) {
  AGORA_ON_PRIVATE_STACK(agora_mem_alloc_placed(bytes, placement, rank, out));
  if (!out_param("agora_mem_alloc_placed", out)) return AGORA_ERR_INVALID_ARGUMENT;
  RUNTIME_OR("agora_alloc", AGORA_ERR_NOT_INITIALIZED);
  if (!placement_valid(rt, "agora_alloc_placed", placement, &rank)) return AGORA_ERR_INVALID_ARGUMENT;
  return allocated(rt->alloc_collective(bytes, (agora::Placement)placement, rank), out);
}

agora_status_t agora_mem_malloc(size_t bytes, void **out) {
  AGORA_ON_PRIVATE_STACK(agora_mem_malloc(bytes, out));
  if (!out_param("agora_mem_malloc", out)) return AGORA_ERR_INVALID_ARGUMENT;
  RUNTIME_OR("agora_malloc", AGORA_ERR_NOT_INITIALIZED);
  return allocated(rt->malloc_local(bytes), out);
}

agora_status_t agora_mem_malloc_placed(size_t bytes, agora_placement_t placement, int rank, void **out) {
  AGORA_ON_PRIVATE_STACK(agora_mem_malloc_placed(bytes, placement, rank, out));
  if (!out_param("agora_mem_malloc_placed", out)) return AGORA_ERR_INVALID_ARGUMENT;
  RUNTIME_OR("agora_malloc_placed", AGORA_ERR_NOT_INITIALIZED);
  if (!placement_valid(rt, "agora_malloc_placed", placement, &rank)) return AGORA_ERR_INVALID_ARGUMENT;
  return allocated(rt->malloc_placed(bytes, (agora::Placement)placement, rank), out);
}

agora_status_t agora_mem_free(void *ptr) {
  AGORA_ON_PRIVATE_STACK(agora_mem_free(ptr));
  RUNTIME_OR("agora_free", AGORA_ERR_NOT_INITIALIZED);
  return (agora_status_t)rt->free_any(ptr);
}

// The deprecated forms (agora.h): the pointer, NULL on failure.
void *agora_alloc(size_t bytes) {
  void *p = nullptr;
  agora_mem_alloc(bytes, &p);
  return p;
}

void *agora_alloc_placed(size_t bytes, agora_placement_t placement, int rank) {
  void *p = nullptr;
  agora_mem_alloc_placed(bytes, placement, rank, &p);
  return p;
}

void *agora_malloc(size_t bytes) {
  void *p = nullptr;
  agora_mem_malloc(bytes, &p);
  return p;
}

void *agora_malloc_placed(size_t bytes, agora_placement_t placement, int rank) {
  void *p = nullptr;
  agora_mem_malloc_placed(bytes, placement, rank, &p);
  return p;
}

int agora_free(void *ptr) { return agora_mem_free(ptr); }

int agora_home_of(const void *ptr) {
  RUNTIME_OR("agora_home_of", -1);
  if (!rt->space().maybe_allocated((uintptr_t)ptr)) return -1;
  return rt->home_of(rt->space().page_of((uintptr_t)ptr));
}

int agora_is_global(const void *ptr) {
  RUNTIME_OR("agora_is_global", 0);
  return rt->space().contains((uintptr_t)ptr);
}

// A destroyed lock's id (agora_lock_destroy): no created lock has it (their
// ids stay below 2^63) and it is not 0, the mark of an address-named lock.
static constexpr uint64_t kDestroyedLock = UINT64_MAX;

// Gives locks[0..count) new ids. call_site: the program's call, so that
// ranks' creations can be compared.
static agora_status_t init_locks(const char *fn, agora_lock_t *locks, size_t count, const void *call_site) {
  AGORA_ON_PRIVATE_STACK(init_locks(fn, locks, count, call_site));
  RUNTIME_OR(fn, AGORA_ERR_NOT_INITIALIZED);
  if (!locks) {
    agora::log_error("%s: the lock is NULL", fn);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  if (count == 0) {
    agora::log_error("%s: count must be at least 1", fn);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  if (count > (1ull << 40)) {
    agora::log_error("%s: %zu locks is too many (at most 2^40)", fn, count);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  std::string module, error;
  uint64_t site = 0;
  if (agora::platform::code_ref_from_address(call_site, &module, &site, &error))
    site ^= std::hash<std::string>{}(module);
  uint64_t first = rt->create_locks(count, site);
  if (first == UINT64_MAX) return AGORA_ERR_NO_MEMORY;  // out of ids (the runtime said so)
  // A handle holds its id + 1: id 0 in a handle means "named by its address".
  for (size_t i = 0; i < count; ++i) locks[i].id = first + i + 1;
  return AGORA_OK;
}

agora_status_t agora_lock_init(agora_lock_t *lock) {
  return init_locks("agora_lock_init", lock, 1, __builtin_return_address(0));
}

agora_status_t agora_lock_array_init(agora_lock_t *locks, size_t count) {
  return init_locks("agora_lock_array_init", locks, count, __builtin_return_address(0));
}

// The deprecated forms: handles in global memory (valid on every rank),
// allocated before any id is taken, so that a failure leaves the ids (which
// every rank must hand out alike) untouched.
static agora_lock_t *create_locks(size_t count, const void *call_site) {
  AGORA_ON_PRIVATE_STACK(create_locks(count, call_site));
  RUNTIME_OR("agora_lock_create", nullptr);
  if (count == 0 || count > (1ull << 40)) {
    agora::log_error("agora_lock_array_create: count %zu is not between 1 and 2^40", count);
    return nullptr;
  }
  auto *locks = (agora_lock_t *)rt->malloc_local(count * sizeof(agora_lock_t));
  if (!locks) {
    agora::log_error("agora_lock_array_create(%zu): cannot allocate %zu handles of %zu bytes", count, count,
                     sizeof(agora_lock_t));
    return nullptr;
  }
  if (init_locks("agora_lock_array_create", locks, count, call_site) != AGORA_OK) {
    rt->free_any(locks);
    return nullptr;
  }
  return locks;
}

agora_lock_t *agora_lock_create(void) { return create_locks(1, __builtin_return_address(0)); }

agora_lock_t *agora_lock_array_create(size_t count) { return create_locks(count, __builtin_return_address(0)); }

// The lock service's key of a lock: a created lock's id, or the address of
// a zero-filled agora_lock_t in global memory (an address-named lock).
static bool lock_key(Runtime *rt, const char *fn, const agora_lock_t *lock, uint64_t *key) {
  if (!lock) {
    agora::log_error("%s: the lock is NULL", fn);
    return false;
  }
  if (lock->id == kDestroyedLock) {
    agora::log_error(
        "%s(%p): the lock was destroyed (agora_lock_destroy); initialise it again "
        "(agora_lock_init, or zero-fill it in global memory) before using it",
        fn, (const void *)lock);
    return false;
  }
  if (lock->id) {
    *key = lock->id - 1;
    return true;
  }
  if (!rt->space().maybe_allocated((uintptr_t)lock)) {
    agora::log_error(
        "%s(%p): a lock with id 0 is named by its address, which must be in global "
        "memory (a global of a program built with agoracc, agora_malloc'd or "
        "agora_alloc'd memory); this one is not: use agora_lock_create, or place it "
        "in global memory",
        fn, (const void *)lock);
    return false;
  }
  *key = (uint64_t)(uintptr_t)lock;
  return true;
}

int agora_lock(agora_lock_t *lock) {
  AGORA_ON_PRIVATE_STACK(agora_lock(lock));
  RUNTIME_OR("agora_lock", AGORA_ERR_NOT_INITIALIZED);
  uint64_t key;
  if (!lock_key(rt, "agora_lock", lock, &key)) return AGORA_ERR_INVALID_ARGUMENT;
  return rt->lock(key);
}

int agora_unlock(agora_lock_t *lock) {
  AGORA_ON_PRIVATE_STACK(agora_unlock(lock));
  RUNTIME_OR("agora_unlock", AGORA_ERR_NOT_INITIALIZED);
  uint64_t key;
  if (!lock_key(rt, "agora_unlock", lock, &key)) return AGORA_ERR_INVALID_ARGUMENT;
  return rt->unlock(key);
}

int agora_trylock(agora_lock_t *lock) {
  AGORA_ON_PRIVATE_STACK(agora_trylock(lock));
  RUNTIME_OR("agora_trylock", AGORA_ERR_NOT_INITIALIZED);
  uint64_t key;
  if (!lock_key(rt, "agora_trylock", lock, &key)) return AGORA_ERR_INVALID_ARGUMENT;
  return agora::program_trylock(rt, key);
}

agora_status_t agora_lock_destroy(agora_lock_t *lock) {
  AGORA_ON_PRIVATE_STACK(agora_lock_destroy(lock));
  RUNTIME_OR("agora_lock_destroy", AGORA_ERR_NOT_INITIALIZED);
  uint64_t key;
  if (!lock_key(rt, "agora_lock_destroy", lock, &key)) return AGORA_ERR_INVALID_ARGUMENT;
  int status = rt->lock_destroy(key);
  if (status == AGORA_OK) lock->id = kDestroyedLock;
  return (agora_status_t)status;
}

agora_status_t agora_lock_array_destroy(agora_lock_t *locks, size_t count) {
  if (!locks && count) {
    agora::log_error("agora_lock_array_destroy: locks is NULL");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < count; ++i)
    if (agora_status_t status = agora_lock_destroy(&locks[i])) return status;
  return AGORA_OK;
}

int agora_barrier(void) {
  AGORA_ON_PRIVATE_STACK(agora_barrier());
  RUNTIME_OR("agora_barrier", AGORA_ERR_NOT_INITIALIZED);
  return rt->barrier();
}

int agora_flush(const void *ptr, size_t bytes) {
  AGORA_ON_PRIVATE_STACK(agora_flush(ptr, bytes));
  RUNTIME_OR("agora_flush", AGORA_ERR_NOT_INITIALIZED);
  return rt->flush(ptr, bytes);
}

int agora_flush_all(void) {
  AGORA_ON_PRIVATE_STACK(agora_flush_all());
  RUNTIME_OR("agora_flush_all", AGORA_ERR_NOT_INITIALIZED);
  return rt->flush_all();
}

int agora_reduce(void *buf, size_t count, agora_type_t type, agora_op_t op) {
  AGORA_ON_PRIVATE_STACK(agora_reduce(buf, count, type, op));
  RUNTIME_OR("agora_reduce", AGORA_ERR_NOT_INITIALIZED);
  if ((type != AGORA_INT64 && type != AGORA_DOUBLE) || (op != AGORA_SUM && op != AGORA_MIN && op != AGORA_MAX) ||
      (!buf && count)) {
    agora::log_error("agora_reduce: bad type %d or op %d (or NULL buffer)", (int)type, (int)op);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  return rt->reduce(buf, count, (agora::ReduceType)type, (agora::ReduceOp)op);
}

// rank -1 with placed: the placement rule.
static int thread_create(const char *fn_name, agora_thread_t *t, bool placed, int rank, void *(*fn)(void *),
                         void *arg) {
  AGORA_ON_PRIVATE_STACK(thread_create(fn_name, t, placed, rank, fn, arg));
  RUNTIME_OR(fn_name, AGORA_ERR_NOT_INITIALIZED);
  if (!t || !fn) {
    agora::log_error("%s: %s is NULL", fn_name, !t ? "the thread handle" : "the function");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  *t = agora_thread_t{-1, 0, 0};
  if (!placed && (rank < 0 || rank >= rt->compute_nranks())) {
    agora::log_error("%s: rank %d is not between 0 and %d", fn_name, rank, rt->compute_nranks() - 1);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  agora::Rank where = -1;
  uint64_t id = 0;
  int status = rt->thread_create(rank, fn, arg, &where, &id);
  if (status == AGORA_OK) *t = agora_thread_t{where, 0, id};
  return status;
}

int agora_thread_create(agora_thread_t *t, void *(*fn)(void *), void *arg) {
  return thread_create("agora_thread_create", t, true, -1, fn, arg);
}

int agora_thread_create_on(agora_thread_t *t, int rank, void *(*fn)(void *), void *arg) {
  return thread_create("agora_thread_create_on", t, false, rank, fn, arg);
}

int agora_thread_join(agora_thread_t t, void **ret) {
  AGORA_ON_PRIVATE_STACK(agora_thread_join(t, ret));
  RUNTIME_OR("agora_thread_join", AGORA_ERR_NOT_INITIALIZED);
  if (t.rank < 0 || t.rank >= rt->compute_nranks() || t.id == 0) {
    agora::log_error("agora_thread_join: (rank %d, id %llu) is not a thread handle (a failed create?)", (int)t.rank,
                     (unsigned long long)t.id);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  return rt->thread_join(t.rank, t.id, ret);
}

int agora_thread_slots(void) {
  RUNTIME_OR("agora_thread_slots", AGORA_ERR_NOT_INITIALIZED);
  return rt->thread_slots();
}

uint64_t agora_thread_self(void) {
  RUNTIME_OR("agora_thread_self", 0);
  return rt->thread_self();
}

// ---- synchronisation among threads: objects named by their address ----------

// The object must lie in allocated global memory (it is named by its address).
static bool global_object(Runtime *rt, const char *fn, const void *object, size_t size) {
  uintptr_t a = (uintptr_t)object;
  if (object && rt->space().maybe_allocated(a) && rt->space().maybe_allocated(a + size - 1)) return true;
  agora::log_error(
      "%s(%p): %s; thread barriers, condition variables and semaphores are named by "
      "their address and must live in global memory (a global of a program built "
      "with agoracc, malloc'd memory of such a program, agora_malloc'd or "
      "agora_alloc'd memory)",
      fn, object, object ? "not in global memory" : "NULL");
  return false;
}

static constexpr uint32_t kBarrierMagic = 0x41424152;  // "RABA": initialised by agora_thread_barrier_init

int agora_thread_barrier_init(agora_thread_barrier_t *b, unsigned count) {
  RUNTIME_OR("agora_thread_barrier_init", AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, "agora_thread_barrier_init", b, sizeof *b)) return AGORA_ERR_INVALID_ARGUMENT;
  if (count == 0) {
    agora::log_error("agora_thread_barrier_init(%p): count must be at least 1", (void *)b);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  b->count = count;
  b->magic = kBarrierMagic;
  return AGORA_OK;
}

int agora_thread_barrier_wait_count(agora_thread_barrier_t *b, unsigned count) {
  AGORA_ON_PRIVATE_STACK(agora_thread_barrier_wait_count(b, count));
  RUNTIME_OR("agora_thread_barrier_wait", AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, "agora_thread_barrier_wait", b, sizeof *b)) return AGORA_ERR_INVALID_ARGUMENT;
  if (count == 0) {
    agora::log_error("agora_thread_barrier_wait(%p): count must be at least 1", (void *)b);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  return rt->thread_barrier_wait((uint64_t)(uintptr_t)b, count);
}

int agora_thread_barrier_wait(agora_thread_barrier_t *b) {
  RUNTIME_OR("agora_thread_barrier_wait", AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, "agora_thread_barrier_wait", b, sizeof *b)) return AGORA_ERR_INVALID_ARGUMENT;
  if (b->magic != kBarrierMagic) {
    agora::log_error(
        "agora_thread_barrier_wait(%p): not initialised (agora_thread_barrier_init, "
        "or pass the count with agora_thread_barrier_wait_count)",
        (void *)b);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  return agora_thread_barrier_wait_count(b, b->count);
}

int agora_thread_barrier_destroy(agora_thread_barrier_t *b) {
  RUNTIME_OR("agora_thread_barrier_destroy", AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, "agora_thread_barrier_destroy", b, sizeof *b)) return AGORA_ERR_INVALID_ARGUMENT;
  b->magic = 0;
  return AGORA_OK;
}

static constexpr uint32_t kReductionMagic = 0x44455254;  // "TRED": initialised by agora_thread_reduction_init
static_assert(AGORA_THREAD_REDUCE_MAX == agora::ThreadReduceService::kMaxElements);

int agora_thread_reduction_init(agora_thread_reduction_t *r, unsigned count) {
  AGORA_ON_PRIVATE_STACK(agora_thread_reduction_init(r, count));
  RUNTIME_OR("agora_thread_reduction_init", AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, "agora_thread_reduction_init", r, sizeof *r)) return AGORA_ERR_INVALID_ARGUMENT;
  if (count == 0) {
    agora::log_error("agora_thread_reduction_init(%p): count must be at least 1", (void *)r);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  int status = rt->thread_reduction_init((uint64_t)(uintptr_t)r, count);
  if (status != AGORA_OK) return status;
  // For debuggers only: reductions never read the object (its manager keeps the count).
  r->count = count;
  r->magic = kReductionMagic;
  return AGORA_OK;
}

int agora_thread_reduce(agora_thread_reduction_t *r, void *buf, size_t n, agora_type_t type, agora_op_t op) {
  AGORA_ON_PRIVATE_STACK(agora_thread_reduce(r, buf, n, type, op));
  RUNTIME_OR("agora_thread_reduce", AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, "agora_thread_reduce", r, sizeof *r)) return AGORA_ERR_INVALID_ARGUMENT;
  return rt->thread_reduce((uint64_t)(uintptr_t)r, buf, n, (agora::ReduceType)type, (agora::ReduceOp)op);
}

int agora_thread_reduction_destroy(agora_thread_reduction_t *r) {
  AGORA_ON_PRIVATE_STACK(agora_thread_reduction_destroy(r));
  RUNTIME_OR("agora_thread_reduction_destroy", AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, "agora_thread_reduction_destroy", r, sizeof *r)) return AGORA_ERR_INVALID_ARGUMENT;
  int status = rt->thread_reduction_destroy((uint64_t)(uintptr_t)r);
  if (status == AGORA_OK) r->magic = 0;
  return status;
}

int agora_cond_init(agora_cond_t *c) {
  RUNTIME_OR("agora_cond_init", AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, "agora_cond_init", c, sizeof *c)) return AGORA_ERR_INVALID_ARGUMENT;
  *c = agora_cond_t{{0, 0}};
  return AGORA_OK;
}

static int cond_wait(const char *fn, agora_cond_t *c, agora_lock_t *lock, double deadline) {
  AGORA_ON_PRIVATE_STACK(cond_wait(fn, c, lock, deadline));
  RUNTIME_OR(fn, AGORA_ERR_NOT_INITIALIZED);
  uint64_t key;
  if (!global_object(rt, fn, c, sizeof *c) || !lock_key(rt, fn, lock, &key)) return AGORA_ERR_INVALID_ARGUMENT;
  return rt->cond_wait((uint64_t)(uintptr_t)c, key, deadline);
}

int agora_cond_wait(agora_cond_t *c, agora_lock_t *lock) { return cond_wait("agora_cond_wait", c, lock, -1); }

int agora_cond_timedwait(agora_cond_t *c, agora_lock_t *lock, double deadline) {
  if (!(deadline >= 0)) {
    agora::log_error("agora_cond_timedwait: deadline %g is not an agora_wtime() value", deadline);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  return cond_wait("agora_cond_timedwait", c, lock, deadline);
}

static int cond_signal(const char *fn, agora_cond_t *c, bool all) {
  AGORA_ON_PRIVATE_STACK(cond_signal(fn, c, all));
  RUNTIME_OR(fn, AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, fn, c, sizeof *c)) return AGORA_ERR_INVALID_ARGUMENT;
  return rt->cond_signal((uint64_t)(uintptr_t)c, all);
}

int agora_cond_signal(agora_cond_t *c) { return cond_signal("agora_cond_signal", c, false); }
int agora_cond_broadcast(agora_cond_t *c) { return cond_signal("agora_cond_broadcast", c, true); }

int agora_cond_destroy(agora_cond_t *c) {
  RUNTIME_OR("agora_cond_destroy", AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, "agora_cond_destroy", c, sizeof *c)) return AGORA_ERR_INVALID_ARGUMENT;
  return AGORA_OK;
}

int agora_sem_init(agora_sem_t *s, unsigned value) {
  AGORA_ON_PRIVATE_STACK(agora_sem_init(s, value));
  RUNTIME_OR("agora_sem_init", AGORA_ERR_NOT_INITIALIZED);
  if (!global_object(rt, "agora_sem_init", s, sizeof *s)) return AGORA_ERR_INVALID_ARGUMENT;
  if (value > agora::SemaphoreService::kMaxValue) {
    agora::log_error("agora_sem_init(%p): value %u is above SEM_VALUE_MAX (%llu)", (void *)s, value,
                     (unsigned long long)agora::SemaphoreService::kMaxValue);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  s->value = value;
  return rt->sem_init((uint64_t)(uintptr_t)s, value);
}

#define SEM_OBJECT(fn)                                                         \
  RUNTIME_OR(fn, AGORA_ERR_NOT_INITIALIZED);                                   \
  if (!global_object(rt, fn, s, sizeof *s)) return AGORA_ERR_INVALID_ARGUMENT; \
  uint64_t key = (uint64_t)(uintptr_t)s

int agora_sem_wait(agora_sem_t *s) {
  AGORA_ON_PRIVATE_STACK(agora_sem_wait(s));
  SEM_OBJECT("agora_sem_wait");
  return rt->sem_wait(key, false);
}

int agora_sem_trywait(agora_sem_t *s) {
  AGORA_ON_PRIVATE_STACK(agora_sem_trywait(s));
  SEM_OBJECT("agora_sem_trywait");
  return rt->sem_wait(key, true);
}

int agora_sem_post(agora_sem_t *s) {
  AGORA_ON_PRIVATE_STACK(agora_sem_post(s));
  SEM_OBJECT("agora_sem_post");
  return rt->sem_post(key);
}

int agora_sem_getvalue(agora_sem_t *s, int *value) {
  AGORA_ON_PRIVATE_STACK(agora_sem_getvalue(s, value));
  SEM_OBJECT("agora_sem_getvalue");
  if (!value) {
    agora::log_error("agora_sem_getvalue: value is NULL");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  return rt->sem_get_value(key, value);
}

int agora_sem_destroy(agora_sem_t *s) {
  AGORA_ON_PRIVATE_STACK(agora_sem_destroy(s));
  SEM_OBJECT("agora_sem_destroy");
  return rt->sem_destroy(key);
}

const char *agora_protocol_name(void) {
  RUNTIME_OR("agora_protocol_name", "");
  return rt->config().protocol.c_str();
}

size_t agora_stats_json(char *buf, size_t size) {
  AGORA_ON_PRIVATE_STACK(agora_stats_json(buf, size));
  RUNTIME_OR("agora_stats_json", 0);
  std::string s = rt->stats_json();
  if (buf && size) {
    size_t n = std::min(size - 1, s.size());
    std::memcpy(buf, s.data(), n);
    buf[n] = 0;
  }
  return s.size();
}

agora_status_t agora_stats_get(agora_stats_t *out, agora_stats_scope_t scope) {
  AGORA_ON_PRIVATE_STACK(agora_stats_get(out, scope));
  RUNTIME_OR("agora_stats_get", AGORA_ERR_NOT_INITIALIZED);
  if (!out || (scope != AGORA_STATS_RANK && scope != AGORA_STATS_JOB)) {
    if (!out)
      agora::log_error("agora_stats_get: out is NULL");
    else
      agora::log_error("agora_stats_get: scope %d is not AGORA_STATS_RANK or AGORA_STATS_JOB", (int)scope);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  // Filled here, copied out without the lock (out may be global memory).
  agora::Stats got;
  if (scope == AGORA_STATS_RANK)
    got = rt->stats_snapshot();
  else if (int status = rt->stats_job(&got))
    return (agora_status_t)status;
  *out = got;
  return AGORA_OK;
}

int agora_stats_reset(void) {
  AGORA_ON_PRIVATE_STACK(agora_stats_reset());
  RUNTIME_OR("agora_stats_reset", AGORA_ERR_NOT_INITIALIZED);
  rt->stats_reset();
  return AGORA_OK;
}

}  // extern "C"
