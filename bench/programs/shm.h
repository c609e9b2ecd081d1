/* shm.h -- one shared-memory programming interface, two implementations.
 *
 * Every benchmark program is written once against the SHM_* macros below and
 * compiled twice (as Samhita/RegC did with its macro layer):
 *
 *   -DSHM_AGORA     T SPMD workers per MPI rank (T from "--threads-per-rank T",
 *                   BENCH_THREADS_PER_RANK or AGORA_THREADS_PER_RANK; default
 *                   1), worker id = rank*T + t, global memory from Agora.
 *   -DSHM_PTHREADS  one process; main() spawns P threads that each run the same
 *                   SPMD worker with id 0..P-1 (P from "-p P", "--threads P"
 *                   or the environment variable BENCH_THREADS; default 2).
 *
 * The programming model is the intersection of the two: SPMD workers, with
 * collective allocation (every worker calls SHM_ALLOC with the same size in the
 * same order and gets the same pointer), locks, barriers and all-reduce.
 * Program globals are *not* shared under Agora (every rank is a process) and
 * are shared by the T workers of a rank, so programs keep shared pointers and
 * per-worker state in locals (or SHM_TLS variables) and only share memory
 * obtained from SHM_ALLOC.
 *
 * Typical main():
 *
 *     int main(int argc, char **argv) {
 *         SHM_INIT(&argc, &argv);              // agora_init
 *         struct config cfg = {.n = 2048};     // defaults
 *         const struct shm_option opts[] = {   // shm_options.h
 *             {"size", "n", SHM_OPT_SIZE, &cfg.n, "N", "grid side", SHM_AT_LEAST(3)},
 *             SHM_OPTIONS_END};
 *         int rc = shm_parse_options(argc, argv, opts, "what the program does");
 *         if (rc != SHM_OPTIONS_PARSED)        // --help (0) or a usage error (2),
 *             return rc;                       // reported and finalized
 *         if (cross-option check fails) return shm_usage("...\n");  // worker 0 prints; exit 2
 *         return shm_run_and_finish(worker, &cfg);  // run the worker(s), finalize
 *     }
 *
 * shm_parse_options() adds the options every program takes: "-p P" /
 * "--threads P" and "--threads-per-rank T" (each build accepts the other's
 * and ignores it with a note, so command lines are interchangeable), and
 * -h / --help.
 *
 * This header must be included before any system header (it selects
 * _GNU_SOURCE for clock_gettime, pthread barriers and mmap). */
#ifndef BENCH_SHM_H
#define BENCH_SHM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm_options.h"

#if defined(SHM_AGORA) == defined(SHM_PTHREADS)
#error "compile with exactly one of -DSHM_AGORA or -DSHM_PTHREADS"
#endif

#define SHM_PAGE_SIZE 4096
#define SHM_MAX_PROCS 256
/* Largest number of elements combined per round of the pthreads all-reduce;
 * longer buffers are reduced in chunks. */
#define SHM_REDUCE_CHUNK 32

typedef int (*shm_worker_fn)(void *arg);

enum shm_type { SHM_T_INT64 = 0, SHM_T_DOUBLE = 1 };
enum shm_op { SHM_OP_SUM = 0, SHM_OP_MIN = 1, SHM_OP_MAX = 2 };

/* Statistics of the Agora runtime captured around the timed kernel, so that
 * per-iteration counts exclude initialisation and validation. The names are
 * fields of AGORA_STATS_FIELDS (agora.h), read with agora_stats_get. */
#define SHM_NSTATS 25
static const char *const shm_stat_names[SHM_NSTATS] = {
    "read_faults", "write_faults", "pages_fetched", "invalidations_sent", "invalidations_received", "messages_sent",
    "bytes_sent", "lock_acquires", "barriers", "fault_time_s", "sync_time_s",
    /* multiple-writer protocols (hlrc, regc); 0 under the others */
    "twins", "diffs_sent", "diff_bytes",
    /* regc: lock-carried, broadcast and barrier updates applied to copies */
    "updates_applied",
    /* fetching without the home (issue 14): one-sided reads, prefetched
     * pages, hlrc home pages found written by the kernel's tracking */
    "one_sided_reads", "pages_prefetched", "home_writes_tracked",
    /* bytes read one-sided (bytes_sent counts messages only); hlrc's
     * pages refetched at barrier end */
    "one_sided_bytes", "pages_refreshed",
    /* the bounded cache (AGORA_CACHE, docs/cache.md) */
    "cache_evictions", "cache_writebacks", "cache_writeback_bytes",
    /* its frame pool (AGORA_CACHE_FRAMES) */
    "cache_frames_pooled", "cache_frames_unpooled"};

static inline void shm_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

/* Page-granular home of byte `off` of an allocation of `total` bytes under
 * block placement: rank r homes pages [r*np/N, (r+1)*np/N). Used by the
 * pthreads build (and as the Agora fallback) to decompose work exactly like
 * Agora's default placement does. */
static inline int shm__block_home(size_t off, size_t total, int nprocs)
{
    size_t np = (total + SHM_PAGE_SIZE - 1) / SHM_PAGE_SIZE;
    size_t page = off / SHM_PAGE_SIZE;
    int r = (int)((page * (size_t)nprocs) / (np ? np : 1));
    /* correct the estimate against the exact start formula */
    while (r + 1 < nprocs && (size_t)(r + 1) * np / (size_t)nprocs <= page)
        r++;
    while (r > 0 && (size_t)r * np / (size_t)nprocs > page)
        r--;
    return r;
}

/* ----------------------------------------------------------------------- */
/* The thread team of one process: all P workers under pthreads, the T       */
/* worker threads of one rank under Agora. Local barrier, a publication slot */
/* for the results of calls one thread makes for all, and all-reduce slots.  */
/* ----------------------------------------------------------------------- */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#define SHM_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define SHM_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define SHM_CPU_RELAX() ((void)0)
#endif

#define SHM_TLS _Thread_local

static struct {
    int n; /* threads in the team; 0 until shm_parse_options starts it */
    /* Barrier: spin briefly, then sleep on a futex -- what OpenMP runtimes
     * do, and comparable to Agora's barrier, whose ranks poll before napping.
     * A plain pthread_barrier_t puts every waiter to sleep at once, which on
     * a loaded machine costs a scheduler round trip per barrier. Set
     * BENCH_PTHREAD_BARRIER=1 to use pthread_barrier_wait instead. */
    int use_pthread_barrier;
    pthread_barrier_t barrier;
    unsigned arrived;       /* atomic: threads at the current barrier */
    unsigned generation;    /* atomic: completed barriers (futex word) */
    unsigned sleepers;      /* atomic: threads that may sleep on the futex */
    void *volatile publish; /* thread 0 -> all: result of a collective call */
    /* all-reduce slots, double-buffered so that one barrier per round
     * suffices to reuse them: round k+2 reuses round k's buffer only after
     * every thread has passed round k+1's first barrier, i.e. finished
     * reading round k. */
    uint64_t slots[2][SHM_MAX_PROCS][SHM_REDUCE_CHUNK];
    uint64_t result[2][SHM_REDUCE_CHUNK]; /* Agora: the rank's reduced values */
} shm__team;

static _Thread_local int shm__lt;         /* thread index in the team; 0 in main() */
static _Thread_local unsigned shm__round; /* all-reduce round counter */
static double shm__t_start;               /* end of SHM_INIT, for total_s */

static inline void shm__team_init(int n)
{
    if (n > SHM_MAX_PROCS) shm_die("at most %d threads per process", SHM_MAX_PROCS);
    shm__team.n = n;
    const char *pb = getenv("BENCH_PTHREAD_BARRIER");
    shm__team.use_pthread_barrier = pb && *pb && strcmp(pb, "0") != 0;
    pthread_barrier_init(&shm__team.barrier, NULL, (unsigned)n);
}

static inline void shm__team_barrier(void)
{
    if (shm__team.n == 1) return;
    if (shm__team.use_pthread_barrier) {
        pthread_barrier_wait(&shm__team.barrier);
        return;
    }
    unsigned gen = __atomic_load_n(&shm__team.generation, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&shm__team.arrived, 1, __ATOMIC_ACQ_REL) == (unsigned)shm__team.n) {
        /* last to arrive: reset the count, then release the others (the
         * count is reset before anyone can observe the new generation) */
        __atomic_store_n(&shm__team.arrived, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&shm__team.generation, 1, __ATOMIC_SEQ_CST);
        /* seq_cst pairs with the sleepers' increment: either we see them or
         * they see the new generation and do not sleep */
        if (__atomic_load_n(&shm__team.sleepers, __ATOMIC_SEQ_CST))
            syscall(SYS_futex, &shm__team.generation, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
        return;
    }
    for (int i = 0; i < 20000; i++) { /* about 0.1-1 ms */
        if (__atomic_load_n(&shm__team.generation, __ATOMIC_ACQUIRE) != gen) return;
        SHM_CPU_RELAX();
    }
    __atomic_add_fetch(&shm__team.sleepers, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&shm__team.generation, __ATOMIC_SEQ_CST) == gen)
        syscall(SYS_futex, &shm__team.generation, FUTEX_WAIT_PRIVATE, gen, NULL, NULL, 0);
    __atomic_sub_fetch(&shm__team.sleepers, 1, __ATOMIC_SEQ_CST);
}

/* Thread 0 of the team returns `p` (computed by thread 0 only) to every
 * thread of the team. */
static inline void *shm__team_publish(void *p)
{
    if (shm__team.n == 1) return p;
    if (shm__lt == 0) shm__team.publish = p;
    shm__team_barrier();
    p = shm__team.publish;
    shm__team_barrier(); /* nobody may overwrite publish before all have read it */
    return p;
}

/* Combine the team's slots of round buffer g, elements [0,n), in thread
 * order into out (so the result does not depend on timing). */
static inline void shm__team_combine(unsigned g, size_t n, void *out, enum shm_type t, enum shm_op op)
{
    for (size_t i = 0; i < n; i++) {
        if (t == SHM_T_DOUBLE) {
            double acc, v;
            memcpy(&acc, &shm__team.slots[g][0][i], 8);
            for (int r = 1; r < shm__team.n; r++) {
                memcpy(&v, &shm__team.slots[g][r][i], 8);
                acc = op == SHM_OP_SUM ? acc + v : op == SHM_OP_MIN ? fmin(acc, v) : fmax(acc, v);
            }
            memcpy((char *)out + i * 8, &acc, 8);
        } else {
            int64_t acc, v;
            memcpy(&acc, &shm__team.slots[g][0][i], 8);
            for (int r = 1; r < shm__team.n; r++) {
                memcpy(&v, &shm__team.slots[g][r][i], 8);
                acc = op == SHM_OP_SUM ? acc + v : op == SHM_OP_MIN ? (v < acc ? v : acc) : (v > acc ? v : acc);
            }
            memcpy((char *)out + i * 8, &acc, 8);
        }
    }
}

struct shm__thread_arg {
    int lt;
    int (*fn)(void *);
    void *arg;
    int rc;
};

static inline void *shm__thread_main(void *p)
{
    struct shm__thread_arg *a = p;
    shm__lt = a->lt;
    a->rc = a->fn(a->arg);
    return NULL;
}

/* Run fn on every thread of the team (thread 0 on its own thread too, so that
 * every worker has a fresh thread-local state) and join them. Returns thread
 * 0's exit code, or the first non-zero one of the others if thread 0's is 0. */
static inline int shm__team_run(int (*fn)(void *), void *arg)
{
    int p = shm__team.n;
    pthread_t th[SHM_MAX_PROCS];
    struct shm__thread_arg a[SHM_MAX_PROCS];
    for (int i = 0; i < p; i++) {
        a[i] = (struct shm__thread_arg){i, fn, arg, 0};
        if (pthread_create(&th[i], NULL, shm__thread_main, &a[i]) != 0) shm_die("pthread_create failed");
    }
    int rc = 0;
    for (int i = 0; i < p; i++) {
        pthread_join(th[i], NULL);
        if (!rc) rc = a[i].rc;
    }
    return rc;
}

/* ======================================================================= */
#ifdef SHM_AGORA
/* ======================================================================= */
/* N ranks x T worker threads per rank ("--threads-per-rank T" after the
 * program name, BENCH_THREADS_PER_RANK or AGORA_THREADS_PER_RANK; default
 * 1): worker id = rank*T + t, nprocs = N*T.
 * agora_barrier, agora_reduce, agora_mem_alloc and agora_lock_array_init are per-rank
 * collectives made by thread 0 of each rank between local barriers; locks are
 * held by threads, and page faults may come from any thread. With T = 1 the
 * calls go straight to Agora. */
#include <agora/agora.h>

typedef agora_lock_t shm_lock_t;
#define SHM_BACKEND "agora"

static int shm__rank, shm__nranks; /* cached at init */

static inline int shm_threads_per_rank(void) { return shm__team.n; }
static inline int shm_id(void) { return shm__rank * shm__team.n + shm__lt; }
static inline int shm_nprocs(void) { return shm__nranks * shm__team.n; }
static inline double shm_time(void) { return agora_wtime(); }
static inline const char *shm_protocol(void) { return agora_protocol_name(); }

/* Barrier over every worker of every rank; `hook` (may be NULL) runs on
 * thread 0 of every rank right after the ranks' barrier, while the rank's
 * other threads still wait. */
static inline void shm__barrier_hook(void (*hook)(void))
{
    shm__team_barrier();
    if (shm__lt == 0) {
        agora_barrier();
        if (hook) hook();
    }
    shm__team_barrier();
}
static inline void shm_barrier(void) { shm__barrier_hook(NULL); }

static inline void *shm_alloc(size_t bytes)
{
    void *p = NULL;
    if (shm__lt == 0) agora_mem_alloc(bytes, &p);
    return shm__team_publish(p);
}
/* Always inlined: the locks' creation site (compared across ranks) is the program's. */
static inline __attribute__((always_inline)) shm_lock_t *shm_lock_array_create(size_t n)
{
    void *p = NULL;
    if (shm__lt == 0 && agora_mem_malloc(n * sizeof(agora_lock_t), &p) == AGORA_OK &&
        agora_lock_array_init((agora_lock_t *)p, n) != AGORA_OK) {
        agora_mem_free(p);
        p = NULL;
    }
    return shm__team_publish(p);
}
static inline shm_lock_t *shm_lock_create(void) { return shm_lock_array_create(1); }
static inline void shm_lock(shm_lock_t *l) { agora_lock(l); }
static inline void shm_unlock(shm_lock_t *l) { agora_unlock(l); }

/* All-reduce in place over every worker: the rank's threads are combined in
 * thread order, thread 0 all-reduces that over the ranks (agora_reduce
 * combines in rank order), and every thread copies the result, so every
 * worker gets the same bits. */
static inline void shm_reduce(void *buf, size_t count, enum shm_type t, enum shm_op op)
{
    agora_type_t at = t == SHM_T_DOUBLE ? AGORA_DOUBLE : AGORA_INT64;
    agora_op_t ao = op == SHM_OP_SUM ? AGORA_SUM : op == SHM_OP_MIN ? AGORA_MIN : AGORA_MAX;
    if (shm__team.n == 1) {
        agora_reduce(buf, count, at, ao);
        return;
    }
    for (size_t base = 0; base < count; base += SHM_REDUCE_CHUNK) {
        size_t n = count - base < SHM_REDUCE_CHUNK ? count - base : SHM_REDUCE_CHUNK;
        unsigned g = shm__round++ & 1u;
        char *b = (char *)buf + base * 8;
        memcpy(shm__team.slots[g][shm__lt], b, n * 8);
        shm__team_barrier();
        if (shm__lt == 0) {
            shm__team_combine(g, n, shm__team.result[g], t, op);
            agora_reduce(shm__team.result[g], n, at, ao);
        }
        shm__team_barrier();
        memcpy(b, shm__team.result[g], n * 8);
    }
}

static inline void shm_init(int *argc, char ***argv)
{
    if (agora_init(argc, argv) != AGORA_OK) shm_die("agora_init failed");
    /* BENCH_PIN_CPU=C (bench/servers): the workers (this thread and the team
     * it starts) run on CPU C only, while the service thread agora_init
     * started and the memory servers keep every CPU: Wong & Rendell's node, whose
     * other core is spare (dual) or taken by a core filler (busy). */
    const char *pin = getenv("BENCH_PIN_CPU");
    if (pin && *pin) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(atoi(pin), &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
            shm_die("BENCH_PIN_CPU=%s: cannot pin the worker to that CPU", pin);
    }
    shm__rank = agora_rank();
    shm__nranks = agora_nranks();
    shm__t_start = agora_wtime();
}

/* The one thread that prints for the program (valid before the team starts). */
static inline int shm__is_leader(void) { return shm__rank == 0 && shm__lt == 0; }

/* Starts the rank's team once the options are known: T from
 * --threads-per-rank, else BENCH_THREADS_PER_RANK, else the runtime's
 * AGORA_THREADS_PER_RANK (what "agorarun --threads-per-rank T" sets for
 * fork-join placement), else 1. -p P is the pthreads build's. Returns 0, or
 * -1 with a message in err. */
static inline int shm__team_start(int p, int t, char *err, size_t errlen)
{
    const char *vars[2] = {"BENCH_THREADS_PER_RANK", "AGORA_THREADS_PER_RANK"};
    for (int k = 0; k < 2 && t <= 0; k++)
        if (shm_options_env_int(vars[k], 1, SHM_MAX_PROCS, &t, err, errlen) < 0) return -1;
    shm__team_init(t > 0 ? t : 1);
    if (p > 0 && p != shm_nprocs() && shm__rank == 0)
        fprintf(stderr, "bench: note: -p %d ignored, running on %d Agora ranks x %d threads\n", p, shm__nranks,
                shm__team.n);
    return 0;
}

static inline int shm_run(shm_worker_fn fn, void *arg) { return shm__team.n == 1 ? fn(arg) : shm__team_run(fn, arg); }
static inline void shm_finish(void)
{
    agora_finalize();
    if (shm__team.n) pthread_barrier_destroy(&shm__team.barrier);
}

/* Home unit (here: rank) of byte `off` of the allocation at `base` (of
 * `total` bytes); worker ids rank*T .. rank*T+T-1 share it. */
static inline int shm__home(const void *base, size_t off, size_t total)
{
    int h = agora_home_of((const char *)base + off);
    if (h < 0) /* runtime cannot tell: assume the documented block placement */
        h = shm__block_home(off, total, shm__nranks);
    return h;
}
static inline int shm__workers_per_home(void) { return shm__team.n; }

/* The rank's statistics are snapshot by thread 0 only (the counters are per
 * rank, whatever thread caused them); the others report zeros. */
static inline int shm__stats_owner(void) { return shm__lt == 0; }

/* Snapshot this rank's statistics (values of shm_stat_names) with
 * agora_stats_get; each name is looked up in AGORA_STATS_FIELDS, and a name
 * the runtime does not have ends the program (rather than reading as 0). */
static inline void shm__stats_snapshot(double out[SHM_NSTATS])
{
    agora_stats_t s;
    int rc = agora_stats_get(&s, AGORA_STATS_RANK);
    if (rc != AGORA_OK) shm_die("agora_stats_get failed: %s", agora_strerror(rc));
    for (int k = 0; k < SHM_NSTATS; k++) {
        int found = 0;
#define SHM__STAT_VALUE(kind, name, doc)                                                                               \
    if (!found && strcmp(shm_stat_names[k], #name) == 0) {                                                             \
        out[k] = (double)s.name;                                                                                       \
        found = 1;                                                                                                     \
    }
        AGORA_STATS_FIELDS(SHM__STAT_VALUE)
#undef SHM__STAT_VALUE
        if (!found) shm_die("statistic \"%s\" is not in AGORA_STATS_FIELDS", shm_stat_names[k]);
    }
}

/* ======================================================================= */
#else /* SHM_PTHREADS */
/* ======================================================================= */

typedef pthread_mutex_t shm_lock_t;
#define SHM_BACKEND "pthreads"

static inline int shm_threads_per_rank(void) { return 1; }
static inline int shm_id(void) { return shm__lt; }
static inline int shm_nprocs(void) { return shm__team.n; }
static inline const char *shm_protocol(void) { return "pthreads"; }

static inline double shm_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void shm__barrier_hook(void (*hook)(void))
{
    shm__team_barrier();
    (void)hook; /* no runtime statistics to snapshot */
}
static inline void shm_barrier(void) { shm__team_barrier(); }

/* Collective: thread 0 maps zero-filled, page-aligned memory (like
 * agora_mem_alloc; anonymous mmap leaves first touch to the owning thread) and a
 * barrier publishes the pointer. */
static inline void *shm_alloc(size_t bytes)
{
    void *p = NULL;
    if (shm__lt == 0) {
        p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) p = NULL;
    }
    return shm__team_publish(p);
}

static inline shm_lock_t *shm_lock_array_create(size_t n)
{
    pthread_mutex_t *m = NULL;
    if (shm__lt == 0) {
        m = malloc(n * sizeof *m);
        if (!m) shm_die("out of memory for locks");
        for (size_t i = 0; i < n; i++)
            pthread_mutex_init(&m[i], NULL);
    }
    return shm__team_publish(m);
}
static inline shm_lock_t *shm_lock_create(void) { return shm_lock_array_create(1); }
static inline void shm_lock(shm_lock_t *l) { pthread_mutex_lock(l); }
static inline void shm_unlock(shm_lock_t *l) { pthread_mutex_unlock(l); }

/* All-reduce in place. Every thread combines the slots in thread order, so
 * every thread gets the same bits, as agora_reduce combines in rank order. */
static inline void shm_reduce(void *buf, size_t count, enum shm_type t, enum shm_op op)
{
    for (size_t base = 0; base < count; base += SHM_REDUCE_CHUNK) {
        size_t n = count - base < SHM_REDUCE_CHUNK ? count - base : SHM_REDUCE_CHUNK;
        unsigned g = shm__round++ & 1u;
        char *b = (char *)buf + base * 8;
        memcpy(shm__team.slots[g][shm__lt], b, n * 8);
        shm__team_barrier();
        shm__team_combine(g, n, b, t, op);
    }
}

static inline void shm_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    shm__t_start = shm_time();
}

static inline int shm__is_leader(void) { return shm__lt == 0; }

/* Starts the team once the options are known: P from -p / --threads, else
 * BENCH_THREADS, else 2. --threads-per-rank is the Agora build's. Returns
 * 0, or -1 with a message in err. */
static inline int shm__team_start(int p, int t, char *err, size_t errlen)
{
    if (p <= 0 && shm_options_env_int("BENCH_THREADS", 1, SHM_MAX_PROCS, &p, err, errlen) < 0) return -1;
    if (p <= 0) p = 2;
    shm__team_init(p);
    if (t > 1) fprintf(stderr, "bench: note: --threads-per-rank %d ignored by the pthreads build (%d threads)\n", t, p);
    return 0;
}

static inline int shm_run(shm_worker_fn fn, void *arg) { return shm__team_run(fn, arg); }
static inline void shm_finish(void)
{
    if (shm__team.n) pthread_barrier_destroy(&shm__team.barrier);
}

static inline int shm__home(const void *base, size_t off, size_t total)
{
    (void)base;
    return shm__block_home(off, total, shm__team.n);
}
static inline int shm__workers_per_home(void) { return 1; }
static inline int shm__stats_owner(void) { return 0; }

static inline void shm__stats_snapshot(double out[SHM_NSTATS])
{
    for (int k = 0; k < SHM_NSTATS; k++)
        out[k] = 0.0;
}

#endif /* SHM_PTHREADS */

/* ======================================================================= */
/* Common helpers built on the primitives above.                          */
/* ======================================================================= */

#define SHM_INIT(pargc, pargv) shm_init((pargc), (pargv))
#define SHM_RUN(fn, arg) shm_run((fn), (arg))
#define SHM_FINISH() shm_finish()
#define SHM_ID() shm_id()
#define SHM_NPROCS() shm_nprocs()
#define SHM_TIME() shm_time()
#define SHM_ALLOC(bytes) shm_alloc(bytes)
#define SHM_BARRIER() shm_barrier()
#define SHM_LOCK_DECL(name) shm_lock_t *name
#define SHM_LOCK_CREATE() shm_lock_create()
#define SHM_LOCK_ARRAY_CREATE(n) shm_lock_array_create(n)
#define SHM_LOCK(l) shm_lock(l)
#define SHM_UNLOCK(l) shm_unlock(l)
#define SHM_REDUCE_SUM_DOUBLE(buf, n) shm_reduce((buf), (n), SHM_T_DOUBLE, SHM_OP_SUM)
#define SHM_REDUCE_MIN_DOUBLE(buf, n) shm_reduce((buf), (n), SHM_T_DOUBLE, SHM_OP_MIN)
#define SHM_REDUCE_MAX_DOUBLE(buf, n) shm_reduce((buf), (n), SHM_T_DOUBLE, SHM_OP_MAX)
#define SHM_REDUCE_SUM_INT64(buf, n) shm_reduce((buf), (n), SHM_T_INT64, SHM_OP_SUM)
#define SHM_REDUCE_MIN_INT64(buf, n) shm_reduce((buf), (n), SHM_T_INT64, SHM_OP_MIN)
#define SHM_REDUCE_MAX_INT64(buf, n) shm_reduce((buf), (n), SHM_T_INT64, SHM_OP_MAX)

/* Collective allocation that aborts the program if memory is exhausted. */
static inline void *shm_alloc_or_die(size_t bytes, const char *what)
{
    void *p = shm_alloc(bytes);
    if (!p) shm_die("worker %d: cannot allocate %zu bytes for %s", shm_id(), bytes, what);
    return p;
}

/* Owner-computes decomposition. Items [0, nitems) of `item_bytes` each live
 * in the allocation at `base`; worker `id` gets the items [*lo, *hi) whose
 * first byte its process homes under the allocation's placement (Agora's
 * default block placement: rank r homes the r-th 1/N of the pages). With T
 * threads per rank, the rank's items are split evenly over its T workers.
 * The boundaries are computed for every worker from the same data, so the
 * ranges always partition [0, nitems) even if a rank homes nothing. Work
 * decomposed this way touches only local pages except at the boundaries. */
static inline void shm_owned_range(const void *base, size_t nitems, size_t item_bytes, int id, size_t *lo, size_t *hi)
{
    int per = shm__workers_per_home();
    int nunits = shm_nprocs() / per, unit = id / per, sub = id % per;
    size_t total = nitems * item_bytes;
    size_t prev = 0, ulo = 0, uhi = 0;
    for (int r = 0; r <= unit + 1; r++) {
        size_t b;
        if (r == 0)
            b = 0;
        else if (r == nunits)
            b = nitems;
        else {
            /* first item whose home is >= r (homes are non-decreasing) */
            size_t a = 0, z = nitems;
            while (a < z) {
                size_t m = a + (z - a) / 2;
                if (shm__home(base, m * item_bytes, total) >= r)
                    z = m;
                else
                    a = m + 1;
            }
            b = a;
        }
        if (b < prev) b = prev; /* keep the ranges a partition whatever the runtime says */
        if (r == unit) ulo = b;
        if (r == unit + 1) uhi = b;
        prev = b;
    }
    *lo = ulo + (uhi - ulo) * (size_t)sub / (size_t)per;
    *hi = ulo + (uhi - ulo) * (size_t)(sub + 1) / (size_t)per;
}

/* Even split of n items over the workers (for work that is not tied to a
 * particular array, e.g. EP's batches). */
static inline void shm_even_range(size_t n, int id, size_t *lo, size_t *hi)
{
    int np = shm_nprocs();
    *lo = n * (size_t)id / (size_t)np;
    *hi = n * (size_t)(id + 1) / (size_t)np;
}

/* ---- timing of the steady-state kernel --------------------------------- */
static SHM_TLS double shm__k_t0;
static SHM_TLS double shm__k_time;
static SHM_TLS double shm__k_stats0[SHM_NSTATS];
static SHM_TLS double shm__k_stats[SHM_NSTATS];

static inline void shm__kernel_stats0(void) { shm__stats_snapshot(shm__k_stats0); }
static inline void shm__kernel_stats1(void)
{
    shm__stats_snapshot(shm__k_stats);
    for (int k = 0; k < SHM_NSTATS; k++)
        shm__k_stats[k] -= shm__k_stats0[k];
}

/* Collective. Starts the timed region after a barrier. Under Agora, thread 0
 * of every rank snapshots the rank's statistics inside the barrier, before
 * any worker of the rank starts the kernel. */
static inline void shm_kernel_begin(void)
{
    shm__barrier_hook(shm__stats_owner() ? shm__kernel_stats0 : NULL);
    shm__k_t0 = shm_time();
}

/* Collective. Ends the timed region (after a barrier, so the slowest worker
 * counts) and returns its length in seconds; the statistics are snapshot
 * inside the barrier, before any worker of the rank goes on. */
static inline double shm_kernel_end(void)
{
    shm__barrier_hook(shm__stats_owner() ? shm__kernel_stats1 : NULL);
    shm__k_time = shm_time() - shm__k_t0;
    return shm__k_time;
}

/* Collective. The statistics of the last timed kernel summed over ranks
 * (zeros under pthreads), indexed like shm_stat_names. */
static inline void shm_kernel_stats_total(double out[SHM_NSTATS])
{
    /* only thread 0 of a rank holds the rank's counters; the others add 0 */
    memcpy(out, shm__k_stats, SHM_NSTATS * sizeof out[0]);
    shm_reduce(out, SHM_NSTATS, SHM_T_DOUBLE, SHM_OP_SUM);
}

/* Collective. Prints the one machine-readable result line from worker 0:
 *   BENCH_RESULT {"program":..,"variant":..,"size":..,"figure":..,
 *                 "figure_unit":..,"time_s":..,"iterations":..,"valid":..,...}
 * `valid` matters only on worker 0 (validation runs there). Returns the
 * process exit code: 1 if invalid, else 0. `extra` is either NULL or extra
 * JSON members without braces, e.g. "\"nodes\":123". */
static inline int shm_report(const char *program, const char *variant, const char *size, double figure,
                             const char *unit, double time_s, long iterations, int valid, const char *extra)
{
    double st[SHM_NSTATS];
    shm_kernel_stats_total(st);
    if (shm_id() != 0) return 0;
    double total = shm_time() - shm__t_start;
    printf("BENCH_RESULT {\"program\":\"%s\",\"variant\":\"%s\",\"size\":\"%s\","
           "\"figure\":%.6g,\"figure_unit\":\"%s\",\"time_s\":%.6f,\"iterations\":%ld,"
           "\"valid\":%s,\"backend\":\"%s\",\"protocol\":\"%s\",\"nprocs\":%d,"
           "\"threads_per_rank\":%d,\"total_s\":%.6f",
           program, variant, size, isfinite(figure) ? figure : 0.0, unit, time_s, iterations, valid ? "true" : "false",
           SHM_BACKEND, shm_protocol(), shm_nprocs(), shm_threads_per_rank(), total);
#ifdef SHM_AGORA
    printf(",\"kernel_stats\":{");
    for (int k = 0; k < SHM_NSTATS; k++)
        printf("%s\"%s\":%.9g", k ? "," : "", shm_stat_names[k], st[k]);
    printf("}");
#endif
    if (extra && *extra) printf(",%s", extra);
    printf("}\n");
    fflush(stdout);
    return valid ? 0 : 1;
}

/* ---- validation helpers ------------------------------------------------- */

/* |a-b| / max(|a|,|b|, tiny): relative difference used by the checks. */
static inline double shm_rel_diff(double a, double b)
{
    double d = fabs(a - b), m = fmax(fabs(a), fabs(b));
    return m > 1e-300 ? d / m : d;
}

/* Compare two arrays; print the worst mismatch to stderr and return 0 if any
 * element differs by more than rtol (relative) and atol (absolute). */
static inline int shm_check_array(const char *what, const double *got, const double *want, size_t n, double rtol,
                                  double atol)
{
    size_t bad = 0, worst = 0;
    double worst_err = -1.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]);
        int ok = d <= atol || d <= rtol * fmax(fabs(got[i]), fabs(want[i]));
        if (!ok || got[i] != got[i]) {
            if (bad == 0 || d > worst_err) {
                worst = i;
                worst_err = d;
            }
            bad++;
        }
    }
    if (bad) {
        fprintf(stderr,
                "VALIDATION FAILED: %s: %zu of %zu elements differ; worst at [%zu]: got %.17g "
                "expected %.17g (rtol %g, atol %g)\n",
                what, bad, n, worst, got[worst], want[worst], rtol, atol);
        return 0;
    }
    return 1;
}

static inline int shm_check_scalar(const char *what, double got, double want, double rtol)
{
    if (!(shm_rel_diff(got, want) <= rtol)) {
        fprintf(stderr, "VALIDATION FAILED: %s: got %.17g expected %.17g (rel diff %.3g > %g)\n", what, got, want,
                shm_rel_diff(got, want), rtol);
        return 0;
    }
    return 1;
}

/* ---- command line -------------------------------------------------------- */

/* Ends main on bad arguments found after shm_parse_options (checks that
 * involve several options): worker 0 prints the message, every worker shuts
 * down, the exit status is 2. */
__attribute__((format(printf, 1, 2))) static inline int shm_usage(const char *fmt, ...)
{
    if (shm__is_leader()) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    shm_finish();
    return 2;
}

/* The options every program takes, besides its own table. */
static int shm__opt_threads;          /* -p / --threads; 0: not given */
static int shm__opt_threads_per_rank; /* --threads-per-rank; 0: not given */
static const struct shm_option shm__common_options[] = {
#ifdef SHM_AGORA
    {"threads", "p", SHM_OPT_INT, &shm__opt_threads, "P",
     "the pthreads build's thread count; ignored here with a note, agorarun -n sets the ranks", .default_text = "",
     SHM_RANGE(1, SHM_MAX_PROCS)},
    {"threads-per-rank", NULL, SHM_OPT_INT, &shm__opt_threads_per_rank, "T", "worker threads per rank",
     .default_text = "BENCH_THREADS_PER_RANK, AGORA_THREADS_PER_RANK or 1", SHM_RANGE(1, SHM_MAX_PROCS)},
#else
    {"threads", "p", SHM_OPT_INT, &shm__opt_threads, "P", "worker threads", .default_text = "BENCH_THREADS or 2",
     SHM_RANGE(1, SHM_MAX_PROCS)},
    {"threads-per-rank", NULL, SHM_OPT_INT, &shm__opt_threads_per_rank, "T",
     "the Agora build's threads per rank; ignored here with a note", .default_text = "", SHM_RANGE(1, SHM_MAX_PROCS)},
#endif
    SHM_OPTIONS_END};

/* shm_parse_options: the options are good, go on */
#define SHM_OPTIONS_PARSED (-1)

/* Collective, right after SHM_INIT: parses the command line against the
 * program's table `opts` (ended by SHM_OPTIONS_END) and the common options,
 * stores the values, and starts the thread team. Returns SHM_OPTIONS_PARSED
 * to go on; otherwise main returns what it returns: 0 after --help (printed
 * to stdout), 2 after a usage error (a message naming the option on stderr).
 * In both cases worker 0 has printed and every worker has shut down. */
static inline int shm_parse_options(int argc, char **argv, const struct shm_option *opts, const char *about)
{
    const struct shm_option *const tables[] = {opts, shm__common_options, NULL};
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    char err[512];
    int r = shm_options_parse(argc, argv, tables, err, sizeof err);
    if (r == SHM_OPTIONS_OK && shm__team_start(shm__opt_threads, shm__opt_threads_per_rank, err, sizeof err) != 0)
        r = SHM_OPTIONS_ERROR;
    if (r == SHM_OPTIONS_OK) return SHM_OPTIONS_PARSED;
    if (shm__is_leader()) {
        if (r == SHM_OPTIONS_HELP) {
            shm_options_help(stdout, argv[0], about, tables);
            fflush(stdout);
        } else
            fprintf(stderr, "%s: %s\nTry '%s --help'.\n", prog, err, prog);
    }
    shm_finish();
    return r == SHM_OPTIONS_HELP ? 0 : 2;
}

/* Ends main normally: runs the SPMD worker(s), shuts down, returns worker 0's status. */
static inline int shm_run_and_finish(shm_worker_fn fn, void *arg)
{
    if (!shm__team.n) shm_die("call shm_parse_options before shm_run_and_finish (it starts the thread team)");
    int rc = shm_run(fn, arg);
    shm_finish();
    return rc;
}

/* SplitMix64: a tiny, good, seedable generator for reproducible inputs that
 * do not depend on the number of workers. */
static inline uint64_t shm_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
/* Uniform double in [0,1) from a 64-bit hash. */
static inline double shm_u01(uint64_t h) { return (double)(h >> 11) * (1.0 / 9007199254740992.0); }

#endif /* BENCH_SHM_H */
