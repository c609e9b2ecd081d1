/* Agora global pointers: explicit (rank, offset) accesses, blocking and
 * split-phase, with completion signals and a choice of software caches
 * (Themis and SWCC Split-C; docs/gptr.md).
 *
 * Memory. Every rank has a global-pointer segment (AGORA_GPTR_SEGMENT bytes
 * of address space, paid for as it is used). agora_gptr_alloc is collective
 * and works like a Split-C spread array: every rank gets `bytes` at the same
 * offset of its own segment. A global pointer names one byte of one rank's
 * segment: the rank in the top 16 bits, the offset in the low 48, so
 * agora_gptr_add moves within that rank's memory. This memory is not the
 * page-based global memory of agora_mem_alloc: it is reached only through these
 * calls (or, on its own rank, through agora_gptr_to_local, see there).
 *
 * Consistency (the Java/Titanium model, Themis section 1): a thread's
 * accesses to one location take effect in its program order, whatever the
 * network does; accesses to different locations may be reordered; at
 * agora_barrier every write issued before it is visible to every rank, and a
 * write issued before agora_unlock is visible to the next holder of the lock
 * after its agora_lock. The scheme (AGORA_GPTR) decides how:
 *   direct        every access to another rank is a message (the baseline)
 *   ordernocache  messages, at most one in flight per line (the outstanding-write bit)
 *   ordercache    a write-back direct-mapped cache per rank (default)
 *   sequencer     per-pair sequence numbers, reordered at the home
 *   swcc          block-granular directory MSI coherence (stronger: coherent at all times)
 *
 * Errors: a pointer outside the allocated part of a segment, a rank outside
 * 0..N-1, or a scalar access not aligned to its width returns
 * AGORA_ERR_BAD_POINTER (AGORA_ERR_INVALID_ARGUMENT for a bad width) with a
 * message naming it; nothing is sent. */
#ifndef AGORA_GPTR_H
#define AGORA_GPTR_H

#include <stddef.h>
#include <stdint.h>

#include <agora/agora.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t agora_gptr_t;
#define AGORA_GPTR_NULL ((agora_gptr_t)UINT64_MAX)
#define AGORA_GPTR_OFFSET_BITS 48

static inline agora_gptr_t agora_gptr_make(int rank, uint64_t offset)
{
    return (agora_gptr_t)(uint64_t)rank << AGORA_GPTR_OFFSET_BITS | (offset & ((1ull << AGORA_GPTR_OFFSET_BITS) - 1));
}
static inline int agora_gptr_rank(agora_gptr_t g) { return (int)(g >> AGORA_GPTR_OFFSET_BITS); }
static inline uint64_t agora_gptr_offset(agora_gptr_t g) { return g & ((1ull << AGORA_GPTR_OFFSET_BITS) - 1); }
/* The same offset on another rank (an element of a spread array). */
static inline agora_gptr_t agora_gptr_on(agora_gptr_t g, int rank)
{
    return agora_gptr_make(rank, agora_gptr_offset(g));
}
static inline agora_gptr_t agora_gptr_add(agora_gptr_t g, int64_t bytes)
{
    return agora_gptr_make(agora_gptr_rank(g), agora_gptr_offset(g) + (uint64_t)bytes);
}

/* Collective: every rank passes the same size, in the same order (checked).
 * *out: the caller's part, zero-filled, aligned to 64 KiB. AGORA_ERR_NO_MEMORY
 * (*out AGORA_GPTR_NULL) if the segment is full (AGORA_GPTR_SEGMENT). The
 * memory lives until agora_finalize (a segment has no free). */
agora_status_t agora_gptr_mem_alloc(size_t bytes_per_rank, agora_gptr_t *out);
/* Deprecated: the same returning the pointer, AGORA_GPTR_NULL on failure. */
AGORA_DEPRECATED("agora_gptr_mem_alloc") agora_gptr_t agora_gptr_alloc(size_t bytes_per_rank);

/* The caller's own memory behind g (NULL if g is another rank's). Loads and
 * stores through it bypass the scheme: safe for data no other rank accesses
 * in the same phase (between barriers). Under swcc also only for blocks no
 * other rank has asked for since (their current copy may be elsewhere);
 * under the caching schemes another rank may keep reading an older cached
 * copy until its next barrier or lock. (SWCC Split-C section 2.5's hazard.) */
void *agora_gptr_to_local(agora_gptr_t g);
/* The global pointer of a byte of the caller's segment (AGORA_GPTR_NULL if p is not in it). */
agora_gptr_t agora_gptr_from_local(const void *p);

/* Blocking scalar accesses: width 1, 2, 4 or 8 bytes, aligned to it; each is
 * one atomic access at the home. */
int agora_gptr_read(agora_gptr_t src, void *value, size_t width);
int agora_gptr_write(agora_gptr_t dst, const void *value, size_t width);

/* Completion signals (Themis section 2.1): init to zero, each
 * split-phase call increments it, each completion decrements it;
 * agora_gptr_signal_wait returns when it is zero again. One thread waits on
 * a signal at a time. A signal holds no resources: agora_gptr_signal_destroy
 * only checks that nothing counted on it is pending and no thread waits on
 * it (AGORA_ERR_MISUSE, the signal left as it was, if one is), after which
 * its memory may be reused. agora_gptr_signal_init on a signal in use (some
 * operations pending, or a waiter) is AGORA_ERR_MISUSE the same way. A
 * zero-filled signal is valid without init; one that is neither is
 * AGORA_ERR_INVALID_ARGUMENT ("never initialised") wherever it is passed. */
typedef struct agora_gptr_signal {
    uint64_t opaque[4];
} agora_gptr_signal_t;
agora_status_t agora_gptr_signal_init(agora_gptr_signal_t *signal);
agora_status_t agora_gptr_signal_wait(agora_gptr_signal_t *signal);
/* *pending: the operations counted on the signal that have not completed. */
agora_status_t agora_gptr_signal_pending(agora_gptr_signal_t *signal, int64_t *pending);
agora_status_t agora_gptr_signal_destroy(agora_gptr_signal_t *signal);

/* Deprecated names of the above (removed in the next minor version).
 * agora_signal_pending returns the count, or a negative status. */
typedef agora_gptr_signal_t agora_signal_t AGORA_DEPRECATED("agora_gptr_signal_t");
AGORA_DEPRECATED("agora_gptr_signal_init") int agora_signal_init(agora_gptr_signal_t *signal);
AGORA_DEPRECATED("agora_gptr_signal_wait") int agora_signal_wait(agora_gptr_signal_t *signal);
AGORA_DEPRECATED("agora_gptr_signal_pending") int64_t agora_signal_pending(agora_gptr_signal_t *signal);

/* Split-phase scalar accesses. A read completes when *value holds the
 * result. A write completes when this rank's later accesses are sure to see
 * it (under ordercache: at once, in the cache); every rank sees it after the
 * writer's next barrier or lock release. A NULL signal counts the operation
 * on the calling thread's implicit one, waited for by agora_gptr_sync. */
int agora_gptr_read_async(agora_gptr_t src, void *value, size_t width, agora_gptr_signal_t *signal);
int agora_gptr_write_async(agora_gptr_t dst, const void *value, size_t width, agora_gptr_signal_t *signal);

/* Bulk transfers of any size and alignment (large ones go in chunks of
 * AGORA_GPTR_CHUNK bytes, not a message per line or block, except under
 * swcc, which moves whole blocks through its directory). get/put block;
 * the _async forms are Split-C's split-phase get/put: the buffers must stay
 * untouched until the signal (or agora_gptr_sync) says they completed, and a
 * put completes once performed at the home. A thread waits for its
 * operations (agora_gptr_sync, its signals) before it ends: their
 * completions are counted on its signals. */
int agora_gptr_get(void *dst, agora_gptr_t src, size_t bytes);
int agora_gptr_put(agora_gptr_t dst, const void *src, size_t bytes);
int agora_gptr_get_async(void *dst, agora_gptr_t src, size_t bytes, agora_gptr_signal_t *signal);
int agora_gptr_put_async(agora_gptr_t dst, const void *src, size_t bytes, agora_gptr_signal_t *signal);
/* Split-C's sync(): every operation this thread issued with a NULL signal has completed. */
int agora_gptr_sync(void);

/* One-way store (Split-C's `:-`, SWCC Split-C section 2.5): the writer is not
 * told when it arrives (its buffer is free at return); the home is expected
 * to use the data next. agora_gptr_store_sync(bytes) returns once `bytes`
 * bytes of stores from any rank have arrived at the caller since the
 * previous such waits consumed theirs. A barrier also makes every store
 * before it visible. */
int agora_gptr_store(agora_gptr_t dst, const void *src, size_t bytes);
int agora_gptr_store_sync(size_t bytes);

/* The scheme in use ("ordercache", ...). */
const char *agora_gptr_scheme(void);

/* What this rank's scheme counted since start (or agora_gptr_stats_reset);
 * exact counts. */
typedef struct agora_gptr_stats {
    uint64_t reads, writes, stores; /* operations issued */
    uint64_t local;                 /* served from the caller's own segment */
    uint64_t hits, misses;          /* caching schemes: scalar accesses to other ranks */
    uint64_t stalls;                /* waited behind an earlier access to the same line or block */
    uint64_t write_backs;           /* ordercache: dirty lines written back */
    uint64_t requests;              /* request messages sent */
    uint64_t bytes_fetched, bytes_written;
    uint64_t nacks;                  /* swcc: refusals (busy home, early invalidation or recall) */
    uint64_t invalidations, recalls; /* swcc: sent as a home */
    uint64_t out_of_order;           /* sequencer: requests that arrived before their turn */
    uint64_t reorder_depth_max;      /* sequencer: deepest reorder buffer */
    uint64_t stored_bytes_in;        /* one-way store bytes received */
} agora_gptr_stats_t;
int agora_gptr_stats(agora_gptr_stats_t *out);
int agora_gptr_stats_reset(void);

#ifdef __cplusplus
}
#endif

#endif
