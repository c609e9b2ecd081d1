/* Agora: software distributed shared memory over MPI.
 *
 * SPMD model: every rank runs main(), calls agora_init() first and
 * agora_finalize() last. Fork-join model: see agora_thread_create below.
 * Global memory from agora_mem_alloc* and agora_mem_malloc* is readable and
 * writable with ordinary loads and stores from every rank; the consistency
 * protocol (AGORA_PROTOCOL, default "sc") keeps the ranks' views consistent.
 * Every call that can fail returns its status (agora_status_t, or int for
 * calls older than docs/api-conventions.md): AGORA_OK (0), a negative error,
 * or a positive outcome where documented; every error is also described on
 * stderr. Results other than the status come through out-parameters. */
#ifndef AGORA_AGORA_H
#define AGORA_AGORA_H

#include <stddef.h>
#include <stdint.h>

#define AGORA_VERSION_MAJOR 0
#define AGORA_VERSION_MINOR 9
#define AGORA_VERSION_PATCH 0
#define AGORA_VERSION_STRING "0.9.0"

/* Names replaced by the conventions of docs/api-conventions.md stay for one
 * minor version, marked with AGORA_DEPRECATED("the new name"): a use draws a
 * compiler warning naming the replacement. Define AGORA_NO_DEPRECATION_WARNINGS
 * before including this header to silence them. */
#if defined(AGORA_NO_DEPRECATION_WARNINGS)
#define AGORA_DEPRECATED(replacement)
#elif defined(__GNUC__) || defined(__clang__)
#define AGORA_DEPRECATED(replacement) __attribute__((deprecated("use " replacement)))
#else
#define AGORA_DEPRECATED(replacement)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum agora_status {
    AGORA_OK = 0,
    AGORA_ERR_NOT_INITIALIZED = -1, /* API used before agora_init / after agora_finalize, or in a fork() child */
    AGORA_ERR_INVALID_ARGUMENT = -2,
    AGORA_ERR_NO_MEMORY = -3,   /* global memory exhausted */
    AGORA_ERR_NOT_HELD = -4,    /* unlock of a lock this thread does not hold */
    AGORA_ERR_BAD_POINTER = -5, /* free of a pointer Agora did not allocate, or double free */
    AGORA_ERR_CONFIG = -6,      /* bad AGORA_* setting */
    AGORA_ERR_TRANSPORT = -7,
    AGORA_ERR_DEADLOCK = -8, /* the call could never complete (a thread locking a lock it holds) */
    AGORA_ERR_MISUSE = -9,   /* a call the caller or the object's state forbids (two threads of a rank in agora_barrier,
                                destroying a held lock) */
    /* Outcomes that are not errors (positive): */
    AGORA_BARRIER_SERIAL = 1, /* agora_thread_barrier_wait: returned to exactly one waiter per round */
    AGORA_BUSY = 2,           /* agora_trylock / agora_sem_trywait: would have to wait */
    AGORA_TIMEDOUT = 3        /* agora_cond_timedwait: the deadline passed */
} agora_status_t;

/* "AGORA_ERR_NO_MEMORY: global memory exhausted": the status's name and
 * meaning; "unknown status N" for a number that is no status. The text of a
 * status is static; that of an unknown number lasts until the calling
 * thread's next call. */
const char *agora_strerror(int status);

/* The library's version, "MAJOR.MINOR.PATCH" (the headers' is AGORA_VERSION_STRING). */
const char *agora_version(void);

/* Start-up and shut-down (collective). agora_init calls MPI_Init unless the
 * program already did. */
int agora_init(int *argc, char ***argv);
int agora_finalize(void);
int agora_rank(void);
int agora_nranks(void);
double agora_wtime(void); /* seconds, monotonic */

/* ---- Global memory --------------------------------------------------------
 * Collective allocation: every rank calls it with the same size, in the same
 * order, and gets the same pointer. Memory is zero-filled and page-aligned. */
typedef enum agora_placement {
    AGORA_PLACE_BLOCK = 0,  /* rank r homes the r-th contiguous 1/N of the pages (default) */
    AGORA_PLACE_CYCLIC = 1, /* page i is homed on rank i mod N */
    AGORA_PLACE_RANK = 2    /* every page homed on the given rank */
} agora_placement_t;

/* Collective: every rank gets the same pointer in *out. AGORA_OK, or
 * AGORA_ERR_NO_MEMORY / AGORA_ERR_INVALID_ARGUMENT / ... with *out NULL. */
agora_status_t agora_mem_alloc(size_t bytes, void **out);
agora_status_t agora_mem_alloc_placed(size_t bytes, agora_placement_t placement, int rank, void **out);

/* Non-collective allocation, callable from any rank and thread; the memory is
 * homed on the caller and the pointer is valid on every rank. agora_mem_free
 * may be called from any rank. */
agora_status_t agora_mem_malloc(size_t bytes, void **out);
/* Frees agora_mem_malloc'd or agora_mem_malloc_placed memory (collective
 * allocations live until agora_finalize). */
agora_status_t agora_mem_free(void *ptr);

/* Non-collective placed allocation: one thread (e.g. main of a pthreads
 * program) allocates memory homed like agora_mem_alloc_placed's (block or
 * cyclic over all ranks, or on one rank); valid on every rank; freed with
 * agora_mem_free from any rank. */
agora_status_t agora_mem_malloc_placed(size_t bytes, agora_placement_t placement, int rank, void **out);

/* Deprecated: the same calls returning the pointer (NULL on failure, the
 * cause only on stderr). Removed in the next minor version. */
AGORA_DEPRECATED("agora_mem_alloc") void *agora_alloc(size_t bytes);
AGORA_DEPRECATED("agora_mem_alloc_placed")
void *agora_alloc_placed(size_t bytes, agora_placement_t placement, int rank);
AGORA_DEPRECATED("agora_mem_malloc") void *agora_malloc(size_t bytes);
AGORA_DEPRECATED("agora_mem_malloc_placed")
void *agora_malloc_placed(size_t bytes, agora_placement_t placement, int rank);
AGORA_DEPRECATED("agora_mem_free") int agora_free(void *ptr);

/* Rank that homes the page holding ptr, or -1 if ptr is not global memory. */
int agora_home_of(const void *ptr);
/* Nonzero if ptr lies in the global address range. */
int agora_is_global(const void *ptr);

/* ---- Synchronisation ------------------------------------------------------
 * Locks are FIFO-fair and held by a thread. The struct is public so that
 * arrays of locks can be indexed (SPLASH-style LOCKDEC arrays). */
typedef struct agora_lock {
    uint64_t id;
} agora_lock_t;

/* agora_lock_init gives *lock a new id (a "created" lock). Collective in the
 * SPMD model: every rank initialises the same locks in the same order
 * (checked when they are used). In the fork-join model main on rank 0, and
 * any agora thread, initialises locks alone. The handle is the id: copies of
 * it (in global memory, or passed by value to a thread) name the same lock
 * on every rank.
 * Any zero-filled agora_lock_t in global memory is also a lock, named by its
 * address (a static `agora_lock_t l = AGORA_LOCK_INITIALIZER;` in a program
 * built with agoracc, or a field of a G_MALLOC'd structure); it needs no init. */
#define AGORA_LOCK_INITIALIZER                                                                                         \
    {                                                                                                                  \
        0                                                                                                              \
    }
agora_status_t agora_lock_init(agora_lock_t *lock);
agora_status_t agora_lock_array_init(agora_lock_t *locks, size_t count); /* locks[0..count) */
/* Ends a lock: its manager rank drops what it keeps for it (holder, queue,
 * last releaser, the creation signature) and *lock is marked destroyed, so
 * that a later call through it is AGORA_ERR_INVALID_ARGUMENT. Not
 * collective: one thread destroys a lock, once no thread holds it, waits for
 * it, or will use it again (copies of a created lock's handle included).
 * AGORA_ERR_MISUSE, the lock left as it was, if a thread holds it or waits
 * for it; AGORA_ERR_INVALID_ARGUMENT for NULL, a lock already destroyed, or
 * a zero-filled lock outside global memory. Works for created and
 * address-named locks (a destroyed address-named lock is zero-filled again
 * by AGORA_LOCK_INITIALIZER / memset to be reused). */
agora_status_t agora_lock_destroy(agora_lock_t *lock);
/* Destroys locks[0..count) in order; on the first failure returns its status
 * (the locks before it are destroyed, it and those after it are not). */
agora_status_t agora_lock_array_destroy(agora_lock_t *locks, size_t count);

/* Deprecated: a created lock (or count of them) in agora_mem_malloc'd
 * memory, NULL on failure. End one with agora_lock_destroy (or
 * agora_lock_array_destroy), then agora_mem_free the handle. */
AGORA_DEPRECATED("agora_lock_init") agora_lock_t *agora_lock_create(void);
AGORA_DEPRECATED("agora_lock_array_init") agora_lock_t *agora_lock_array_create(size_t count);
int agora_lock(agora_lock_t *lock);
int agora_unlock(agora_lock_t *lock);
int agora_trylock(agora_lock_t *lock); /* AGORA_OK (now held) or AGORA_BUSY */

int agora_barrier(void); /* all ranks; call from one thread per rank */

/* OpenMP flush of [ptr, ptr+bytes) of global memory (docs/flush.md): this
 * rank's writes to the region reach its homes, and this rank's view of the
 * region becomes consistent with them; a write flushed by one rank is seen
 * by another rank's later flush of the same region. Not collective; any
 * thread. Under sc it only checks its arguments (every access already sees
 * the latest write). AGORA_FLUSH=observer (default) moves data only when the
 * region changed (Wong & Rendell's observer model); basic diffs and refreshes it
 * every time. AGORA_ERR_INVALID_ARGUMENT (with a message) if bytes is 0 or
 * the region is not inside allocated global memory. */
int agora_flush(const void *ptr, size_t bytes);
/* The same for every page of global memory this rank holds a copy of or homes. */
int agora_flush_all(void);

typedef enum agora_type { AGORA_INT64 = 0, AGORA_DOUBLE = 1 } agora_type_t;
typedef enum agora_op { AGORA_SUM = 0, AGORA_MIN = 1, AGORA_MAX = 2 } agora_op_t;
/* All-reduce in place over all ranks (collective). Every rank gets the same
 * bits: the combination is done in rank order on one rank. */
int agora_reduce(void *buf, size_t count, agora_type_t type, agora_op_t op);

/* ---- Fork-join threads ----------------------------------------------------
 * pthreads-style threads placed on any rank. The program is written as
 *
 *     agora_init(&argc, &argv);
 *     if (agora_rank() == 0) { ... agora_thread_create ... agora_thread_join ... }
 *     agora_finalize();
 *
 * Ranks other than 0 go straight to agora_finalize, which serves requests and
 * runs the threads placed on that rank until no agora thread runs on any
 * rank (threads never joined included), then shuts down.
 *
 * Any thread, including one started on another rank, may use global memory,
 * locks, agora_mem_malloc/agora_mem_free, and create and join threads itself. Create
 * is a release by the creator and an acquire by the new thread; a thread's
 * return is a release and the join an acquire, so under every protocol the
 * new thread sees what its creator wrote and the joiner what the thread
 * wrote. agora_barrier and agora_reduce stay for one thread per rank (the
 * SPMD model); fork-join threads synchronise with locks, joins, thread
 * barriers, condition variables and semaphores (below).
 *
 * fn must be a function of the program (or of a library loaded on every
 * rank); it is found on the target rank by module and offset, so ASLR does
 * not matter. arg and the return value travel as 64 bits, verbatim: pass
 * integers or pointers to global memory; pointers to a stack or to malloc'd
 * memory mean nothing on another rank, except in a program built with
 * agoracc, where stacks and malloc'd memory are global memory. A thread ends
 * by returning from fn or with agora_thread_exit. */
typedef struct agora_thread {
    int32_t rank; /* where the thread runs */
    uint32_t pad;
    uint64_t id; /* assigned by that rank; 0 in a handle of no thread */
} agora_thread_t;

/* Starts fn(arg). The k-th thread created by this rank with
 * agora_thread_create (k = 0, 1, ...) runs on rank (k / T) % N, where T is
 * AGORA_THREADS_PER_RANK (default 1) and N the number of ranks (on rank 0 of
 * a program built with agoracc main holds the first slot: rank ((k+1) / T) % N).
 * At most N x T threads this rank placed by that rule may be unjoined at once
 * (AGORA_ERR_MISUSE beyond, with a message naming the slots). Returns once
 * the target rank has started it; on error *t is a handle of no thread. */
int agora_thread_create(agora_thread_t *t, void *(*fn)(void *), void *arg);
/* The same on an explicit rank (does not count towards k above). A rank
 * outside 0..N-1 is AGORA_ERR_INVALID_ARGUMENT. */
int agora_thread_create_on(agora_thread_t *t, int rank, void *(*fn)(void *), void *arg);
/* Waits for the thread (on any rank) to return and stores its return value
 * in *ret (if ret is not NULL). A thread is joined once, by one thread:
 * joining it again, concurrently, from itself, or a handle of no thread is
 * AGORA_ERR_INVALID_ARGUMENT at once, never a hang. */
int agora_thread_join(agora_thread_t t, void **ret);
/* Ends the calling agora thread with ret as its return value, as returning
 * from fn would (pthread_exit). Called by main of a program built with
 * agoracc, it ends main: the job ends once every thread has ended. */
void agora_thread_exit(void *ret);

/* Threads that can run at once: ranks x AGORA_THREADS_PER_RANK (what a
 * pthreads program built with agoracc sees as sysconf(_SC_NPROCESSORS_ONLN)). */
int agora_thread_slots(void);
/* A job-wide id of the calling thread (main of rank 0 included); never 0. */
uint64_t agora_thread_self(void);

/* ---- Synchronisation among threads (fork-join model) -----------------------
 * Objects named by their address in global memory: they must live there
 * (a global of a program built with agoracc, G_MALLOC/malloc'd memory, a
 * stack of such a program, agora_mem_malloc/agora_mem_alloc memory). Any thread on
 * any rank may use them. Zero-filled objects are valid (static initialisers).
 * Consistency under every protocol: a barrier is a release and an acquire for
 * every participant (like agora_barrier); agora_sem_post is a release and the
 * agora_sem_wait it satisfies an acquire; condition variables synchronise
 * through their lock. */
typedef struct agora_thread_barrier {
    uint32_t count; /* set by agora_thread_barrier_init */
    uint32_t magic;
    uint64_t reserved[2];
} agora_thread_barrier_t;
/* pthread_barrier_t semantics: count >= 1 threads, reusable round after round. */
int agora_thread_barrier_init(agora_thread_barrier_t *b, unsigned count);
/* AGORA_BARRIER_SERIAL for one waiter per round, AGORA_OK for the others. */
int agora_thread_barrier_wait(agora_thread_barrier_t *b);
/* SPLASH-2's BARRIER(name, n): the count comes with every wait (all waiters
 * of a round must pass the same); no init needed. */
int agora_thread_barrier_wait_count(agora_thread_barrier_t *b, unsigned count);
int agora_thread_barrier_destroy(agora_thread_barrier_t *b);

/* A reduction among a team of threads on any ranks (Samhita/RegC's reduction
 * extension): every thread of the team contributes n values and each gets
 * their combination, with no lock and no page fault (the object is only a
 * name: its manager, the home rank of its page, works from messages).
 * Zero-filled objects (a static global) are valid once initialised. */
typedef struct agora_thread_reduction {
    uint32_t count; /* set by agora_thread_reduction_init */
    uint32_t magic;
    uint64_t reserved[2];
} agora_thread_reduction_t;
/* Like pthread_barrier_init: count >= 1 threads take part in every round.
 * Call it once (one thread) before the team's first reduce. */
int agora_thread_reduction_init(agora_thread_reduction_t *r, unsigned count);
/* All count threads call it with the same n, type and op (checked: a mismatch is
 * AGORA_ERR_MISUSE for every participant of that round, with a message naming both
 * calls); each gets the combination of all contributions in buf (in place, n
 * elements, at most AGORA_THREAD_REDUCE_MAX; more is AGORA_ERR_INVALID_ARGUMENT for
 * every participant of that round). Combined once, in the order of the
 * participants' agora_thread_self() ids, so every participant gets the same bits
 * and a rerun the same result. Reusable round after round. Carries no memory
 * consistency (like MPI_Allreduce): use a barrier to publish memory. */
#define AGORA_THREAD_REDUCE_MAX (1u << 20)
int agora_thread_reduce(agora_thread_reduction_t *r, void *buf, size_t n, agora_type_t type, agora_op_t op);
/* AGORA_BUSY while threads are in a round on it. */
int agora_thread_reduction_destroy(agora_thread_reduction_t *r);

typedef struct agora_cond {
    uint64_t reserved[2];
} agora_cond_t;
#define AGORA_COND_INITIALIZER                                                                                         \
    {                                                                                                                  \
        {                                                                                                              \
            0, 0                                                                                                       \
        }                                                                                                              \
    }
int agora_cond_init(agora_cond_t *c);
/* The caller holds lock; it is released while waiting and held again on return. */
int agora_cond_wait(agora_cond_t *c, agora_lock_t *lock);
/* deadline: an agora_wtime() value; AGORA_TIMEDOUT if it passes first. */
int agora_cond_timedwait(agora_cond_t *c, agora_lock_t *lock, double deadline);
int agora_cond_signal(agora_cond_t *c);
int agora_cond_broadcast(agora_cond_t *c);
int agora_cond_destroy(agora_cond_t *c);

typedef struct agora_sem {
    uint64_t value; /* the initial value, set by agora_sem_init */
    uint64_t reserved[2];
} agora_sem_t;
int agora_sem_init(agora_sem_t *s, unsigned value);
int agora_sem_wait(agora_sem_t *s);
int agora_sem_trywait(agora_sem_t *s); /* AGORA_BUSY if the count is 0 */
int agora_sem_post(agora_sem_t *s);
int agora_sem_getvalue(agora_sem_t *s, int *value);
int agora_sem_destroy(agora_sem_t *s);

/* ---- Programs built with agoracc ------------------------------------------
 * Nonzero in a program linked by agoracc/agoracxx for unmodified
 * shared-memory code (see docs/programs.md): agora_init runs before main,
 * main runs on rank 0 only, on a stack in global memory, and the program's
 * globals and malloc'd memory are global memory. */
int agora_program_mode(void);

/* ---- Introspection --------------------------------------------------------*/
const char *agora_protocol_name(void);
/* Writes this rank's statistics as a JSON object into buf (truncated to
 * size); returns the full length. */
size_t agora_stats_json(char *buf, size_t size);

/* ---- Statistics -----------------------------------------------------------
 * Every statistic, once: X(kind, name, doc), in the order of agora_stats_t's
 * fields and of the JSON's keys. The struct, the JSON (AGORA_STATS_JSON and
 * agora_stats_json), the AGORA_STATS=1 table and the benchmark programs'
 * counters are all made from this list. kind says the C type and how ranks
 * combine:
 *   COUNTER  uint64_t, a count; the job's value is the sum over ranks
 *   PEAK     uint64_t, the highest a quantity reached; the job's is the maximum
 *   SECONDS  double, time spent by threads of the rank; the job's is the sum
 * Any change to the list bumps AGORA_STATS_SCHEMA (the JSON's "schema"; see
 * docs/stats.md). */
#define AGORA_STATS_SCHEMA 4
#define AGORA_STATS_FIELDS(X)                                                                                          \
    X(COUNTER, read_faults, "reads that faulted: the page was not readable here")                                      \
    X(COUNTER, write_faults, "writes that faulted: the page was not writable here")                                    \
    X(COUNTER, pages_fetched, "pages copied here from another rank")                                                   \
    X(COUNTER, invalidations_sent, "invalidations sent (sc: by a directory)")                                          \
    X(COUNTER, invalidations_received, "copies of pages invalidated here")                                             \
    X(COUNTER, messages_sent, "messages sent")                                                                         \
    X(COUNTER, bytes_sent, "bytes of those messages, headers included")                                                \
    X(COUNTER, lock_acquires, "locks granted to threads of this rank")                                                 \
    X(COUNTER, barriers, "barriers entered (agora_barrier and thread barriers)")                                       \
    X(COUNTER, twins, "hlrc/regc: pages copied at a first write in an interval")                                       \
    X(COUNTER, diffs_sent, "hlrc/regc: page diffs sent to homes")                                                      \
    X(COUNTER, diff_bytes, "hlrc/regc: bytes of those diffs (runs and their headers)")                                 \
    X(COUNTER, intervals, "hlrc/regc: intervals closed with writes")                                                   \
    X(COUNTER, notices_applied, "hlrc/regc: write notices that invalidated a page here")                               \
    X(COUNTER, stale_replies, "hlrc/regc: page replies dropped (older than required, or duplicates)")                  \
    X(PEAK, notices_kept_peak, "hlrc: most intervals stored at once (bounded by GC)")                                  \
    X(COUNTER, updates_applied, "regc: fine-grain updates applied to a copy in place of an invalidation")              \
    X(SECONDS, fault_time_s, "seconds threads spent in page faults")                                                   \
    X(SECONDS, sync_time_s, "seconds threads spent waiting in locks, barriers and other synchronisation")              \
    X(COUNTER, one_sided_reads, "one-sided reads of another rank's pages (MPI RMA, no action by the home)")            \
    X(COUNTER, pages_prefetched, "pages fetched ahead of a fault (sequential misses)")                                 \
    X(COUNTER, home_writes_tracked, "hlrc: home pages the kernel reported written (no fault taken)")                   \
    X(COUNTER, remote_doorbells, "wake-ups sent to service threads of ranks on other hosts")                           \
    X(COUNTER, one_sided_bytes, "bytes read one-sided: pages and the homes' metadata")                                 \
    X(COUNTER, pages_refreshed,                                                                                        \
      "hlrc: pages fetched at a barrier's end because this rank kept missing them after barriers")                     \
    X(COUNTER, flush_calls, "agora_flush and agora_flush_all calls on this rank")                                      \
    X(COUNTER, flush_unmapped, "flushed pages held here by no valid copy: nothing to do")                              \
    X(COUNTER, flush_case1_diffs,                                                                                      \
      "flush CASE-1: a copy with changes in the region, or any copy under basic (diff sent)")                          \
    X(COUNTER, flush_case2_refreshes,                                                                                  \
      "flush CASE-2: an unchanged copy never refreshed or noticed since (refresh asked)")                              \
    X(COUNTER, flush_case3_skips, "flush CASE-3: an unchanged copy, no change notice (no message)")                    \
    X(COUNTER, flush_case4_home_unchanged, "flush CASE-4: a home page unchanged since observed (no message)")          \
    X(COUNTER, flush_case5_home_changed, "flush CASE-5: a home page changed since observed (notices sent)")            \
    X(COUNTER, flush_diffs_received, "flush diffs (or regc: change reports) a home received")                          \
    X(COUNTER, flush_refresh_requests_received, "flush refresh requests a home received")                              \
    X(COUNTER, flush_refreshes_received, "flush refreshes (page data, or regc: confirmations) received")               \
    X(COUNTER, change_notices_sent, "flush change notices a home sent to observers")                                   \
    X(COUNTER, notice_acks_received, "acknowledgements of change notices a home received")                             \
    X(COUNTER, flush_rounds_repeated, "multi-page flushes that flushed pages again: a notice came meanwhile")          \
    X(COUNTER, cache_evictions, "copies of remote pages dropped to keep within AGORA_CACHE")                           \
    X(COUNTER, cache_writebacks, "evicted copies whose writes went home first (diffs or whole pages)")                 \
    X(COUNTER, cache_writeback_bytes, "bytes of those write-backs (diffs, or pages under sc)")                         \
    X(PEAK, cache_resident_peak,                                                                                       \
      "most copies of remote pages held at once (bounded by AGORA_CACHE or the kernel's mapping limit)")               \
    X(COUNTER, cache_home_reclaims, "sc: home pages taken back from readers and owners to bound the view's mappings")  \
    X(COUNTER, cache_frames_pooled,                                                                                    \
      "copies of remote pages mapped in from the cache's frame pool (AGORA_CACHE_FRAMES=pool)")                        \
    X(COUNTER, cache_frames_unpooled, "copies installed at their own place because every frame of the pool was taken") \
    X(COUNTER, flush_refresh_waits,                                                                                    \
      "flushes of an unchanged copy that waited for a refresh another thread of the rank asked for")

#define AGORA_STATS_CTYPE_COUNTER uint64_t
#define AGORA_STATS_CTYPE_PEAK uint64_t
#define AGORA_STATS_CTYPE_SECONDS double
#define AGORA_STATS_MEMBER_(kind, name, doc) AGORA_STATS_CTYPE_##kind name;
typedef struct agora_stats {
    AGORA_STATS_FIELDS(AGORA_STATS_MEMBER_)
} agora_stats_t;
#undef AGORA_STATS_MEMBER_

typedef enum agora_stats_scope {
    /* This rank's statistics since agora_init or its last agora_stats_reset.
     * Not collective: any thread, any time. */
    AGORA_STATS_RANK = 0,
    /* The job's: collective like agora_reduce (every rank, one thread per
     * rank), and every rank gets the same values: each rank's RANK scope at
     * its call, counters and seconds summed, peaks as the maximum. */
    AGORA_STATS_JOB = 1
} agora_stats_scope_t;

/* Fills *out. AGORA_ERR_INVALID_ARGUMENT for a NULL out or a value that is
 * no agora_stats_scope_t. (Until 0.9 scope was an int; C callers passing an
 * int still compile, C++ callers get a deprecated overload below.) */
agora_status_t agora_stats_get(agora_stats_t *out, agora_stats_scope_t scope);
/* Zeroes this rank's statistics (peaks restart from the current value at
 * their next update). Not collective: to start a measured phase on every
 * rank, call it on every rank between two agora_barrier calls. The report
 * at agora_finalize (AGORA_STATS, AGORA_STATS_JSON) covers what is counted
 * after the last reset. */
int agora_stats_reset(void);

#ifdef __cplusplus
}
/* C++ code that passed the scope as an int. */
AGORA_DEPRECATED("agora_stats_get with an agora_stats_scope_t")
inline int agora_stats_get(agora_stats_t *out, int scope) { return agora_stats_get(out, (agora_stats_scope_t)scope); }
#endif
#endif /* AGORA_AGORA_H */
