// The C API of global pointers (include/agora/gptr.h) over the runtime's
// GlobalPointers (src/runtime/global_pointers/global_pointers.h).
#include <cstring>
#include <new>
#include <type_traits>

#include "agora/agora.h"
#include "agora/gptr.h"
#include "common/log.h"
#include "runtime/runtime.h"

using agora::Runtime;
namespace gptr = agora::gptr;

namespace agora {
Runtime *api_runtime();
}

static_assert(sizeof(agora_gptr_signal_t) >= sizeof(gptr::Signal), "agora_gptr_signal_t too small for gptr::Signal");
static_assert(sizeof(agora_gptr_stats_t) == sizeof(gptr::Counters), "agora_gptr_stats_t and gptr::Counters differ");
static_assert(AGORA_GPTR_OFFSET_BITS == gptr::kOffsetBits);

namespace {

Runtime *live(const char *fn) {
  Runtime *rt = agora::api_runtime();
  if (!rt || Runtime::in_forked_child()) {
    agora::log_error("%s called before agora_init (or after agora_finalize, or in a fork() child)", fn);
    return nullptr;
  }
  return rt;
}

gptr::Signal *signal_of(agora_gptr_signal_t *s) { return reinterpret_cast<gptr::Signal *>(s); }

// Local buffers are the caller's private memory: the engine fills and reads
// them while it holds its lock, where a page fault of global memory could
// wait for the very service that holds it.
bool private_buffer(Runtime *rt, const char *fn, const void *p, size_t bytes) {
  if (!bytes || !rt->space().contains((uintptr_t)p)) return true;
  agora::log_error(
      "%s: the local buffer %p is in Agora's page-based global memory (agora_mem_alloc, agora_mem_malloc, "
      "or a stack or global of a program built with agoracc); use private memory",
      fn, p);
  return false;
}

int access(const char *fn, gptr::OpKind kind, agora_gptr_t g, const void *local, size_t bytes, bool scalar,
           agora_gptr_signal_t *signal, bool implicit) {
  Runtime *rt = live(fn);
  if (!rt) return AGORA_ERR_NOT_INITIALIZED;
  if (!private_buffer(rt, fn, local, bytes)) return AGORA_ERR_INVALID_ARGUMENT;
  if (signal && !rt->global_pointers().signal_valid(fn, signal_of(signal))) return AGORA_ERR_INVALID_ARGUMENT;
  gptr::Signal *s = signal ? signal_of(signal) : implicit ? rt->global_pointers().implicit_signal() : nullptr;
  return rt->global_pointers().access(fn, kind, g, const_cast<void *>(local), bytes, scalar, s);
}

}  // namespace

extern "C" {

agora_status_t agora_gptr_mem_alloc(size_t bytes_per_rank, agora_gptr_t *out) {
  if (!out) {
    agora::log_error("agora_gptr_mem_alloc: out is NULL (the pointer comes back through it)");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  *out = AGORA_GPTR_NULL;
  Runtime *rt = live("agora_gptr_mem_alloc");
  if (!rt) return AGORA_ERR_NOT_INITIALIZED;
  uint64_t offset = rt->global_pointers().alloc(bytes_per_rank);
  if (offset == UINT64_MAX) return AGORA_ERR_NO_MEMORY;  // the runtime said why
  *out = agora_gptr_make(rt->rank(), offset);
  return AGORA_OK;
}

agora_gptr_t agora_gptr_alloc(size_t bytes_per_rank) {
  agora_gptr_t g = AGORA_GPTR_NULL;
  agora_gptr_mem_alloc(bytes_per_rank, &g);
  return g;
}

void *agora_gptr_to_local(agora_gptr_t g) {
  Runtime *rt = live("agora_gptr_to_local");
  return rt ? rt->global_pointers().to_local(g) : nullptr;
}

agora_gptr_t agora_gptr_from_local(const void *p) {
  Runtime *rt = live("agora_gptr_from_local");
  return rt ? rt->global_pointers().from_local(p) : AGORA_GPTR_NULL;
}

int agora_gptr_read(agora_gptr_t src, void *value, size_t width) {
  return access("agora_gptr_read", gptr::OpKind::Read, src, value, width, true, nullptr, false);
}
int agora_gptr_write(agora_gptr_t dst, const void *value, size_t width) {
  return access("agora_gptr_write", gptr::OpKind::Write, dst, value, width, true, nullptr, false);
}
int agora_gptr_read_async(agora_gptr_t src, void *value, size_t width, agora_gptr_signal_t *signal) {
  return access("agora_gptr_read_async", gptr::OpKind::Read, src, value, width, true, signal, true);
}
int agora_gptr_write_async(agora_gptr_t dst, const void *value, size_t width, agora_gptr_signal_t *signal) {
  return access("agora_gptr_write_async", gptr::OpKind::Write, dst, value, width, true, signal, true);
}
int agora_gptr_get(void *dst, agora_gptr_t src, size_t bytes) {
  return access("agora_gptr_get", gptr::OpKind::Read, src, dst, bytes, false, nullptr, false);
}
int agora_gptr_put(agora_gptr_t dst, const void *src, size_t bytes) {
  return access("agora_gptr_put", gptr::OpKind::Write, dst, src, bytes, false, nullptr, false);
}
int agora_gptr_get_async(void *dst, agora_gptr_t src, size_t bytes, agora_gptr_signal_t *signal) {
  return access("agora_gptr_get_async", gptr::OpKind::Read, src, dst, bytes, false, signal, true);
}
int agora_gptr_put_async(agora_gptr_t dst, const void *src, size_t bytes, agora_gptr_signal_t *signal) {
  return access("agora_gptr_put_async", gptr::OpKind::Write, dst, src, bytes, false, signal, true);
}
int agora_gptr_store(agora_gptr_t dst, const void *src, size_t bytes) {
  // Counted on the rank's signal for stores, which no caller waits on: a
  // store's completion is not reported (the rank's next release still waits
  // for it). Not the thread's: the thread may end before the store arrives.
  Runtime *rt = live("agora_gptr_store");
  if (!rt) return AGORA_ERR_NOT_INITIALIZED;
  if (!private_buffer(rt, "agora_gptr_store", src, bytes)) return AGORA_ERR_INVALID_ARGUMENT;
  agora::GlobalPointers &gp = rt->global_pointers();
  return gp.access("agora_gptr_store", gptr::OpKind::Store, dst, const_cast<void *>(src), bytes, false,
                   gp.store_signal());
}

int agora_gptr_sync(void) {
  Runtime *rt = live("agora_gptr_sync");
  if (!rt) return AGORA_ERR_NOT_INITIALIZED;
  return rt->global_pointers().signal_wait(rt->global_pointers().implicit_signal());
}

int agora_gptr_store_sync(size_t bytes) {
  Runtime *rt = live("agora_gptr_store_sync");
  if (!rt) return AGORA_ERR_NOT_INITIALIZED;
  return rt->global_pointers().store_sync(bytes);
}

agora_status_t agora_gptr_signal_init(agora_gptr_signal_t *signal) {
  if (!signal) {
    agora::log_error("agora_gptr_signal_init: null signal");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  // With the runtime up, operations may still be counted on it: refused.
  Runtime *rt = agora::api_runtime();
  if (rt && !Runtime::in_forked_child()) return (agora_status_t)rt->global_pointers().signal_init(signal_of(signal));
  new (signal) gptr::Signal();
  return AGORA_OK;
}

agora_status_t agora_gptr_signal_wait(agora_gptr_signal_t *signal) {
  Runtime *rt = live("agora_gptr_signal_wait");
  if (!rt) return AGORA_ERR_NOT_INITIALIZED;
  if (!signal) {
    agora::log_error("agora_gptr_signal_wait: null signal");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  if (!rt->global_pointers().signal_valid("agora_gptr_signal_wait", signal_of(signal)))
    return AGORA_ERR_INVALID_ARGUMENT;
  return (agora_status_t)rt->global_pointers().signal_wait(signal_of(signal));
}

agora_status_t agora_gptr_signal_pending(agora_gptr_signal_t *signal, int64_t *pending) {
  Runtime *rt = live("agora_gptr_signal_pending");
  if (!rt) return AGORA_ERR_NOT_INITIALIZED;
  if (!signal || !pending) {
    agora::log_error("agora_gptr_signal_pending: %s is NULL", !signal ? "signal" : "pending");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  if (!rt->global_pointers().signal_valid("agora_gptr_signal_pending", signal_of(signal)))
    return AGORA_ERR_INVALID_ARGUMENT;
  *pending = rt->global_pointers().signal_pending(signal_of(signal));
  return AGORA_OK;
}

agora_status_t agora_gptr_signal_destroy(agora_gptr_signal_t *signal) {
  Runtime *rt = live("agora_gptr_signal_destroy");
  if (!rt) return AGORA_ERR_NOT_INITIALIZED;
  if (!signal) {
    agora::log_error("agora_gptr_signal_destroy: null signal");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  if (!rt->global_pointers().signal_valid("agora_gptr_signal_destroy", signal_of(signal)))
    return AGORA_ERR_INVALID_ARGUMENT;
  // A waiter means a wait is under way, which counts as pending too.
  int64_t pending = rt->global_pointers().signal_pending(signal_of(signal));
  if (pending != 0) {
    agora::log_error(
        "agora_gptr_signal_destroy(%p): %lld operations counted on it have not completed "
        "(agora_gptr_signal_wait first)",
        (void *)signal, (long long)pending);
    return AGORA_ERR_MISUSE;
  }
  return AGORA_OK;
}

// The deprecated names (gptr.h).
int agora_signal_init(agora_gptr_signal_t *signal) { return agora_gptr_signal_init(signal); }
int agora_signal_wait(agora_gptr_signal_t *signal) { return agora_gptr_signal_wait(signal); }
int64_t agora_signal_pending(agora_gptr_signal_t *signal) {
  int64_t pending = 0;
  agora_status_t status = agora_gptr_signal_pending(signal, &pending);
  return status == AGORA_OK ? pending : (int64_t)status;
}

const char *agora_gptr_scheme(void) {
  Runtime *rt = live("agora_gptr_scheme");
  return rt ? rt->global_pointers().scheme_name() : "";
}

int agora_gptr_stats(agora_gptr_stats_t *out) {
  Runtime *rt = live("agora_gptr_stats");
  if (!rt) return AGORA_ERR_NOT_INITIALIZED;
  if (!out) return AGORA_ERR_INVALID_ARGUMENT;
  gptr::Counters c;
  rt->global_pointers().counters(&c);
  static_assert(std::is_trivially_copyable_v<gptr::Counters>);
  std::memcpy(out, &c, sizeof c);
  return AGORA_OK;
}

int agora_gptr_stats_reset(void) {
  Runtime *rt = live("agora_gptr_stats_reset");
  if (!rt) return AGORA_ERR_NOT_INITIALIZED;
  rt->global_pointers().reset_counters();
  return AGORA_OK;
}

}  // extern "C"
