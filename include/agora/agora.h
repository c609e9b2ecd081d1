/* Agora: software distributed shared memory over MPI.
 *
 * SPMD model: every rank runs main(), calls agora_init() first and
 * agora_finalize() last. Fork-join model: see agora_thread_create below. Global memory returned by agora_alloc* and
 * agora_malloc is readable and writable with ordinary loads and stores from
 * every rank; the consistency protocol (AGORA_PROTOCOL, default "sc") keeps
 * the ranks' views consistent. Functions returning int return AGORA_OK (0) or
 * a negative agora_status_t; every error is also described on stderr. */
#ifndef AGORA_AGORA_H
#define AGORA_AGORA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum agora_status {
    AGORA_OK = 0,
    AGORA_ERR_NOT_INITIALIZED = -1, /* API used before agora_init / after agora_finalize, or in a fork() child */
    AGORA_ERR_INVALID_ARGUMENT = -2,
    AGORA_ERR_NO_MEMORY = -3,       /* global memory exhausted */
    AGORA_ERR_NOT_HELD = -4,        /* unlock of a lock this thread does not hold */
    AGORA_ERR_BAD_POINTER = -5,     /* free of a pointer Agora did not allocate, or double free */
    AGORA_ERR_CONFIG = -6,          /* bad AGORA_* setting */
    AGORA_ERR_TRANSPORT = -7,
    AGORA_ERR_DEADLOCK = -8,        /* the call could never complete (a thread locking a lock it holds) */
    AGORA_ERR_MISUSE = -9           /* called from a thread that may not (e.g. two threads of a rank in agora_barrier) */
} agora_status_t;

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

void *agora_alloc(size_t bytes);
void *agora_alloc_placed(size_t bytes, agora_placement_t placement, int rank);

/* Non-collective allocation, callable from any rank and thread; the memory is
 * homed on the caller and the pointer is valid on every rank. agora_free may
 * be called from any rank. */
void *agora_malloc(size_t bytes);
int agora_free(void *ptr);

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

/* Collective in the SPMD model. In the fork-join model main on rank 0, and
 * any agora thread, creates locks alone (see agora_thread_create). */
agora_lock_t *agora_lock_create(void);
agora_lock_t *agora_lock_array_create(size_t count);   /* index with &locks[i] */
int agora_lock(agora_lock_t *lock);
int agora_unlock(agora_lock_t *lock);

int agora_barrier(void); /* all ranks; call from one thread per rank */

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
 * locks, agora_malloc/agora_free, and create and join threads itself. Create
 * is a release by the creator and an acquire by the new thread; a thread's
 * return is a release and the join an acquire, so under every protocol the
 * new thread sees what its creator wrote and the joiner what the thread
 * wrote. Barriers and reductions stay for one thread per rank (the SPMD
 * model); fork-join threads synchronise with locks and joins.
 *
 * fn must be a function of the program (or of a library loaded on every
 * rank); it is found on the target rank by module and offset, so ASLR does
 * not matter. arg and the return value travel as 64 bits, verbatim: pass
 * integers or pointers to global memory, never pointers to a stack or to
 * malloc'd memory (they mean nothing on another rank). A thread ends by
 * returning from fn (not pthread_exit). */
typedef struct agora_thread {
    int32_t rank; /* where the thread runs */
    uint32_t pad;
    uint64_t id;  /* assigned by that rank; 0 in a handle of no thread */
} agora_thread_t;

/* Starts fn(arg). The k-th thread created by this rank with
 * agora_thread_create (k = 0, 1, ...) runs on rank (k / T) % N, where T is
 * AGORA_THREADS_PER_RANK (default 1) and N the number of ranks. Returns once
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

/* ---- Introspection --------------------------------------------------------*/
const char *agora_protocol_name(void);
/* Writes this rank's statistics as a JSON object into buf (truncated to
 * size); returns the full length. */
size_t agora_stats_json(char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* AGORA_AGORA_H */
