// The C API: argument checks and the "not initialised" guard, then the runtime.
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "agora/agora.h"
#include "api/private_stack.h"
#include "program/program_state.h"
#include "common/log.h"
#include "runtime/runtime.h"

using agora::Runtime;

namespace {
Runtime *g_rt = nullptr;

bool forked_child(const char *fn) {
  if (!Runtime::in_forked_child()) return false;
  agora::log_error("%s called in a process made by fork(): it is not an Agora rank (only the "
                   "processes agorarun starts are); global memory and the API are not available "
                   "in it",
                   fn);
  return true;
}

Runtime *live(const char *fn) {
  if (forked_child(fn)) return nullptr;
  if (!g_rt) agora::log_error("%s called before agora_init (or after agora_finalize)", fn);
  return g_rt;
}
}  // namespace

namespace agora {
Runtime *api_runtime() { return g_rt; }
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
  int status = 0;
  g_rt = Runtime::start(argc, argv, &status);
  if (!g_rt) std::exit(2);  // a bad configuration must not leave ranks running
  return status;
}

int agora_finalize(void) {
  if (agora::program_started() && !agora::program_finishing()) return AGORA_OK;  // at exit
  AGORA_ON_PRIVATE_STACK(agora_finalize());
  RUNTIME_OR("agora_finalize", AGORA_ERR_NOT_INITIALIZED);
  int status = rt->stop();
  g_rt = nullptr;
  return status;
}

int agora_rank(void) {
  RUNTIME_OR("agora_rank", -1);
  return rt->rank();
}

int agora_nranks(void) {
  RUNTIME_OR("agora_nranks", -1);
  return rt->nranks();
}

double agora_wtime(void) { return agora::platform::now_seconds(); }

void *agora_alloc(size_t bytes) { return agora_alloc_placed(bytes, AGORA_PLACE_BLOCK, 0); }

void *agora_alloc_placed(size_t bytes, agora_placement_t placement, int rank) {
  AGORA_ON_PRIVATE_STACK(agora_alloc_placed(bytes, placement, rank));
  RUNTIME_OR("agora_alloc", nullptr);
  if (placement != AGORA_PLACE_BLOCK && placement != AGORA_PLACE_CYCLIC &&
      placement != AGORA_PLACE_RANK) {
    agora::log_error("agora_alloc_placed: placement %d is not AGORA_PLACE_BLOCK, _CYCLIC or _RANK",
                     (int)placement);
    return nullptr;
  }
  if (placement == AGORA_PLACE_RANK && (rank < 0 || rank >= rt->nranks())) {
    agora::log_error("agora_alloc_placed: rank %d is not between 0 and %d", rank, rt->nranks() - 1);
    return nullptr;
  }
  if (placement != AGORA_PLACE_RANK) rank = 0;
  return rt->alloc_collective(bytes, (agora::Placement)placement, rank);
}

void *agora_malloc(size_t bytes) {
  AGORA_ON_PRIVATE_STACK(agora_malloc(bytes));
  RUNTIME_OR("agora_malloc", nullptr);
  return rt->malloc_local(bytes);
}

int agora_free(void *ptr) {
  AGORA_ON_PRIVATE_STACK(agora_free(ptr));
  RUNTIME_OR("agora_free", AGORA_ERR_NOT_INITIALIZED);
  return rt->free_any(ptr);
}

int agora_home_of(const void *ptr) {
  RUNTIME_OR("agora_home_of", -1);
  if (!rt->space().maybe_allocated((uintptr_t)ptr)) return -1;
  return rt->home_of(rt->space().page_of((uintptr_t)ptr));
}

int agora_is_global(const void *ptr) {
  RUNTIME_OR("agora_is_global", 0);
  return rt->space().contains((uintptr_t)ptr);
}

// call_site: the program's call, so that ranks' creations can be compared.
static agora_lock_t *create_locks(size_t count, const void *call_site) {
  AGORA_ON_PRIVATE_STACK(create_locks(count, call_site));
  RUNTIME_OR("agora_lock_create", nullptr);
  if (count == 0) {
    agora::log_error("agora_lock_array_create: count must be at least 1");
    return nullptr;
  }
  if (count > (1ull << 40)) {
    agora::log_error("agora_lock_array_create: %zu locks is too many (at most 2^40)", count);
    return nullptr;
  }
  // Allocated before any id is taken, so a failure leaves the ids (which
  // every rank must hand out alike) untouched.
  auto *locks = new (std::nothrow) agora_lock_t[count];
  if (!locks) {
    agora::log_error("agora_lock_array_create(%zu): cannot allocate %zu handles of %zu bytes",
                     count, count, sizeof(agora_lock_t));
    return nullptr;
  }
  std::string module, error;
  uint64_t site = 0;
  if (agora::platform::code_ref_from_address(call_site, &module, &site, &error))
    site ^= std::hash<std::string>{}(module);
  uint64_t first = rt->create_locks(count, site);
  for (size_t i = 0; i < count; ++i) locks[i].id = first + i;
  return locks;
}

agora_lock_t *agora_lock_create(void) { return create_locks(1, __builtin_return_address(0)); }

agora_lock_t *agora_lock_array_create(size_t count) {
  return create_locks(count, __builtin_return_address(0));
}

int agora_lock(agora_lock_t *lock) {
  AGORA_ON_PRIVATE_STACK(agora_lock(lock));
  RUNTIME_OR("agora_lock", AGORA_ERR_NOT_INITIALIZED);
  if (!lock) return AGORA_ERR_INVALID_ARGUMENT;
  return rt->lock(lock->id);
}

int agora_unlock(agora_lock_t *lock) {
  AGORA_ON_PRIVATE_STACK(agora_unlock(lock));
  RUNTIME_OR("agora_unlock", AGORA_ERR_NOT_INITIALIZED);
  if (!lock) return AGORA_ERR_INVALID_ARGUMENT;
  return rt->unlock(lock->id);
}

int agora_barrier(void) {
  AGORA_ON_PRIVATE_STACK(agora_barrier());
  RUNTIME_OR("agora_barrier", AGORA_ERR_NOT_INITIALIZED);
  return rt->barrier();
}

int agora_reduce(void *buf, size_t count, agora_type_t type, agora_op_t op) {
  AGORA_ON_PRIVATE_STACK(agora_reduce(buf, count, type, op));
  RUNTIME_OR("agora_reduce", AGORA_ERR_NOT_INITIALIZED);
  if ((type != AGORA_INT64 && type != AGORA_DOUBLE) ||
      (op != AGORA_SUM && op != AGORA_MIN && op != AGORA_MAX) || (!buf && count)) {
    agora::log_error("agora_reduce: bad type %d or op %d (or NULL buffer)", (int)type, (int)op);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  return rt->reduce(buf, count, (agora::ReduceType)type, (agora::ReduceOp)op);
}

// rank -1 with placed: the placement rule.
static int thread_create(const char *fn_name, agora_thread_t *t, bool placed, int rank,
                         void *(*fn)(void *), void *arg) {
  AGORA_ON_PRIVATE_STACK(thread_create(fn_name, t, placed, rank, fn, arg));
  RUNTIME_OR(fn_name, AGORA_ERR_NOT_INITIALIZED);
  if (!t || !fn) {
    agora::log_error("%s: %s is NULL", fn_name, !t ? "the thread handle" : "the function");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  *t = agora_thread_t{-1, 0, 0};
  if (!placed && (rank < 0 || rank >= rt->nranks())) {
    agora::log_error("%s: rank %d is not between 0 and %d", fn_name, rank, rt->nranks() - 1);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  agora::Rank where = -1;
  uint64_t id = 0;
  int status = rt->thread_create(rank, fn, arg, &where, &id);
  if (status == 0) *t = agora_thread_t{where, 0, id};
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
  if (t.rank < 0 || t.rank >= rt->nranks() || t.id == 0) {
    agora::log_error("agora_thread_join: (rank %d, id %llu) is not a thread handle (a failed create?)",
                     (int)t.rank, (unsigned long long)t.id);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  return rt->thread_join(t.rank, t.id, ret);
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

}  // extern "C"
