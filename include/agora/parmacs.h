/* PARMACS over Agora: the ANL macros SPLASH-2 and SPLASH-3 programs are
 * written with (MAIN_ENV, G_MALLOC, CREATE, WAIT_FOR_END, LOCKDEC, ALOCKDEC,
 * BARDEC/BARRIER, PAUSE, GETSUB, CLOCK, ...), as C preprocessor macros.
 *
 * A SPLASH makefile uses them through share/agora/c.m4.agora
 * (`MACROS = <prefix>/share/agora/c.m4.agora`): that m4 file makes every
 * processed file include this header, and the macros left in the source
 * are expanded here. Build the program with agoracc (program mode): its
 * globals, main's stack and its malloc'd memory are then global memory, so
 * the pointers SPLASH keeps in globals (`Global`, arrays) reach threads on
 * every rank; main runs on rank 0 and CREATE places threads on the ranks
 * (AGORA_THREADS_PER_RANK consecutive threads per rank).
 *
 * The macro set and each macro's arguments follow SPLASH-2's
 * codes/null_macros/c.m4.null and SPLASH-3's pthread macros (c.m4.pthreads,
 * github.com/SakalisC/Splash-3), which differ in two places, both accepted:
 *   CREATE(fn)        SPLASH-2: starts one thread running fn();
 *   CREATE(fn, n)     SPLASH-3: starts n-1 threads running fn(), then calls
 *                     fn() in the caller;
 *   BARRIER(b, n)     waits until n threads reached b (no BARINIT count
 *                     needed: agora_thread_barrier_wait_count);
 *   BARRIER(b)        pthread_barrier style: the count given to BARINIT(b, n).
 * WAIT_FOR_END(n) joins every thread CREATE started (n is P-1 in SPLASH-2
 * and P in SPLASH-3: both mean "all of them").
 *
 * Locks, barriers, pause flags and GETSUB counters are zero-filled objects
 * named by their address, so LOCKDEC/ALOCKDEC/BARDEC fields of a G_MALLOC'd
 * structure or of a global just work. G_MALLOC(size) is agora_mem_malloc (homed
 * on the calling rank); G_MALLOC(size, p) homes the memory on the rank that
 * runs thread p under the placement rule (a hint; any rank can use it);
 * for block or cyclic placement call agora_mem_malloc_placed directly.
 * CLOCK gives microseconds (agora_wtime). GET_PID numbers the callers 0, 1,
 * ... in call order (a job-wide counter in the program's globals).
 * Tracing/augmentation macros (AUG_*, TRACE_*, DYN_*, monitors) expand to
 * nothing, as in c.m4.null. */
#ifndef AGORA_PARMACS_H
#define AGORA_PARMACS_H

#include <agora/agora.h>
#include <assert.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#include <stdatomic.h> /* SPLASH-3's macro file includes it for every file */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* AGORA_PARMACS_LIBRARY: the library's own src/api/parmacs.cpp, which needs
 * only the declarations. */
#if defined(__PIE__) && !defined(AGORA_PARMACS_LIBRARY)
#error                                                                                                                 \
    "PARMACS programs keep shared state in globals: compile them with agoracc (program mode, -fno-pie), not -agora-spmd or plain cc"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Starts fn() as an agora thread (placed like agora_thread_create) and
 * remembers it for agora_parmacs_wait_for_end. AGORA_OK or a negative
 * agora_status_t (the reason is printed). */
int agora_parmacs_create(void (*fn)(void));
/* Joins every thread agora_parmacs_create started in this process, in
 * creation order. AGORA_OK or the first failure. */
int agora_parmacs_wait_for_end(void);

/* The job-wide GET_PID counter: one object in the program's globals (weak,
 * so every file may include this header), hence shared by all ranks. */
#ifndef AGORA_PARMACS_LIBRARY
__attribute__((weak)) long agora_parmacs_next_pid_ = 0;
__attribute__((weak)) agora_lock_t agora_parmacs_pid_lock_ = AGORA_LOCK_INITIALIZER;
#endif

/* A PARMACS macro whose Agora call failed ends the program, as the SPLASH
 * macro files do on a pthread error (Agora has printed the reason). */
static inline void agora_parmacs_check_(int status, const char *macro, const char *arg)
{
    if (status < 0) {
        fprintf(stderr, "PARMACS %s(%s) failed: agora status %d\n", macro, arg, status);
        exit(-1); /* NOLINT(concurrency-mt-unsafe): PARMACS's behaviour on an error */
    }
}

/* G_MALLOC's value: the memory, or NULL (as malloc; Agora printed why). */
static inline void *agora_parmacs_malloc_(size_t bytes)
{
    void *p = NULL;
    agora_mem_malloc(bytes, &p);
    return p;
}

static inline void *agora_parmacs_malloc_on_(size_t bytes, long thread)
{
    int ranks = agora_nranks();
    int per_rank = ranks > 0 ? agora_thread_slots() / ranks : 1;
    void *p = NULL;
    if (ranks <= 0 || thread < 0) return agora_parmacs_malloc_(bytes);
    if (per_rank < 1) per_rank = 1;
    agora_mem_malloc_placed(bytes, AGORA_PLACE_RANK, (int)((thread / per_rank) % ranks), &p);
    return p;
}

static inline void agora_parmacs_require_program_mode_(void)
{
    if (!agora_program_mode()) {
        fprintf(stderr, "PARMACS: this program was not linked in Agora's program mode; build it "
                        "with agoracc (without -agora-spmd) and start it with agorarun\n");
        exit(2); /* NOLINT(concurrency-mt-unsafe): at start-up, one thread */
    }
}

#ifdef __cplusplus
}
#endif

/* Argument-count dispatch: AGORA_PM_2OR1_(args, two, one)(args). */
#define AGORA_PM_PICK_(a, b, c, ...) c
#define AGORA_PM_2OR1_(two, one, ...) AGORA_PM_PICK_(__VA_ARGS__, two, one, unused)
#define AGORA_PM_FIRST_(a, ...) a

/* ---- Environment ---- */
#define MAIN_ENV
#define ENV
#define EXTERN_ENV
#define NEWPROC
#define MAIN_INITENV(...)                                                                                              \
    {                                                                                                                  \
        agora_parmacs_require_program_mode_();                                                                         \
    }
#define MAIN_END                                                                                                       \
    {                                                                                                                  \
        exit(0);                                                                                                       \
    }

/* ---- Memory ---- */
#define AGORA_PM_MALLOC_1_(size) agora_parmacs_malloc_(size)
#define AGORA_PM_MALLOC_2_(size, thread) agora_parmacs_malloc_on_((size), (long)(thread))
#define G_MALLOC_F(...) AGORA_PM_2OR1_(AGORA_PM_MALLOC_2_, AGORA_PM_MALLOC_1_, __VA_ARGS__)(__VA_ARGS__)
#define G_MALLOC(...) G_MALLOC_F(__VA_ARGS__);
#define NU_MALLOC_F(...) G_MALLOC_F(__VA_ARGS__)
#define NU_MALLOC(...) G_MALLOC_F(__VA_ARGS__);
#define G_FREE(...) agora_mem_free(AGORA_PM_FIRST_(__VA_ARGS__, 0));
#define NU_FREE(...) G_FREE(__VA_ARGS__)

/* ---- Threads ---- */
#define AGORA_PM_CREATE_1_(fn)                                                                                         \
    {                                                                                                                  \
        agora_parmacs_check_(agora_parmacs_create((void (*)(void))(fn)), "CREATE", #fn);                               \
    }
#define AGORA_PM_CREATE_2_(fn, n)                                                                                      \
    {                                                                                                                  \
        long agora_pm_i_;                                                                                              \
        for (agora_pm_i_ = 0; agora_pm_i_ < (long)(n)-1; agora_pm_i_++)                                                \
            AGORA_PM_CREATE_1_(fn)                                                                                     \
        ((void (*)(void))(fn))();                                                                                      \
    }
#define CREATE(...) AGORA_PM_2OR1_(AGORA_PM_CREATE_2_, AGORA_PM_CREATE_1_, __VA_ARGS__)(__VA_ARGS__)
#define WAIT_FOR_END(...)                                                                                              \
    {                                                                                                                  \
        agora_parmacs_check_(agora_parmacs_wait_for_end(), "WAIT_FOR_END", #__VA_ARGS__);                              \
    }
#define GET_PID(pid)                                                                                                   \
    {                                                                                                                  \
        agora_lock(&agora_parmacs_pid_lock_);                                                                          \
        (pid) = agora_parmacs_next_pid_++;                                                                             \
        agora_unlock(&agora_parmacs_pid_lock_);                                                                        \
    }
#define GET_HOME(home)                                                                                                 \
    {                                                                                                                  \
        (home) = agora_rank();                                                                                         \
    }
#define SET_HOME(...)                                                                                                  \
    {                                                                                                                  \
        ;                                                                                                              \
    }

/* ---- Locks ---- */
#define LOCKDEC(l) agora_lock_t l;
#define LOCKINIT(l)                                                                                                    \
    {                                                                                                                  \
        memset(&(l), 0, sizeof(agora_lock_t));                                                                         \
    }
#define LOCK(l)                                                                                                        \
    {                                                                                                                  \
        agora_parmacs_check_(agora_lock(&(l)), "LOCK", #l);                                                            \
    }
#define UNLOCK(l)                                                                                                      \
    {                                                                                                                  \
        agora_parmacs_check_(agora_unlock(&(l)), "UNLOCK", #l);                                                        \
    }
#define NLOCKDEC(l) LOCKDEC(l)
#define NLOCKINIT(l) LOCKINIT(l)
#define NLOCK(l) LOCK(l)
#define NUNLOCK(l) UNLOCK(l)
#define ALOCKDEC(a, n) agora_lock_t a[n];
#define ALOCKINIT(a, n)                                                                                                \
    {                                                                                                                  \
        long agora_pm_i_;                                                                                              \
        for (agora_pm_i_ = 0; agora_pm_i_ < (long)(n); agora_pm_i_++)                                                  \
            memset(&(a)[agora_pm_i_], 0, sizeof(agora_lock_t));                                                        \
    }
#define ALOCK(a, i)                                                                                                    \
    {                                                                                                                  \
        agora_parmacs_check_(agora_lock(&(a)[i]), "ALOCK", #a "[" #i "]");                                             \
    }
#define AULOCK(a, i)                                                                                                   \
    {                                                                                                                  \
        agora_parmacs_check_(agora_unlock(&(a)[i]), "AULOCK", #a "[" #i "]");                                          \
    }

/* AGETL(a, i): SPLASH-3's element i of a lock array (ALOCKDEC). */
#define AGETL(a, i) ((a)[i])

/* ---- Condition variables (SPLASH-3: cholesky, barnes, fmm) ----
 * CONDVARWAIT(c, l) waits on c with the lock l (a LOCKDEC lock) held. */
#define CONDVARDEC(c) agora_cond_t c;
#define CONDVARINIT(c)                                                                                                 \
    {                                                                                                                  \
        agora_parmacs_check_(agora_cond_init(&(c)), "CONDVARINIT", #c);                                                \
    }
#define CONDVARWAIT(c, l)                                                                                              \
    {                                                                                                                  \
        agora_parmacs_check_(agora_cond_wait(&(c), &(l)), "CONDVARWAIT", #c);                                          \
    }
#define CONDVARSIGNAL(c)                                                                                               \
    {                                                                                                                  \
        agora_parmacs_check_(agora_cond_signal(&(c)), "CONDVARSIGNAL", #c);                                            \
    }
#define CONDVARBCAST(c)                                                                                                \
    {                                                                                                                  \
        agora_parmacs_check_(agora_cond_broadcast(&(c)), "CONDVARBCAST", #c);                                          \
    }

/* ---- Fences (SPLASH-3: RELEASE_FENCE(); in barnes) ----
 * A fence that orders a thread's plain accesses for the other threads is,
 * across ranks, a flush of everything this rank holds (OpenMP's flush
 * without a list): the writes before it reach their homes and the reads
 * after it see what other threads flushed before. */
#define RELEASE_FENCE()                                                                                                \
    {                                                                                                                  \
        agora_parmacs_check_(agora_flush_all(), "RELEASE_FENCE", "");                                                  \
    }
#define ACQUIRE_FENCE()                                                                                                \
    {                                                                                                                  \
        agora_parmacs_check_(agora_flush_all(), "ACQUIRE_FENCE", "");                                                  \
    }
#define FULL_FENCE()                                                                                                   \
    {                                                                                                                  \
        agora_parmacs_check_(agora_flush_all(), "FULL_FENCE", "");                                                     \
    }

/* ---- SPLASH-3's region of interest markers and constants ----
 * Written SPLASH3_ROI_BEGIN(); in the programs (c.m4.agora defines them in
 * m4 too, where the bare name also works). */
#define SPLASH3_ROI_BEGIN()
#define SPLASH3_ROI_END()
/* SPLASH-3's macro file defines these for every file (INCLUDES); programs
 * that define them again use the same tokens. */
#ifndef PAGE_SIZE
#define PAGE_SIZE 4096
#endif
#ifndef __MAX_THREADS__
#define __MAX_THREADS__ 256
#endif

/* ---- Barriers ---- */
#define BARDEC(b) agora_thread_barrier_t b;
#define AGORA_PM_BARINIT_1_(b)                                                                                         \
    {                                                                                                                  \
        memset(&(b), 0, sizeof(agora_thread_barrier_t));                                                               \
    }
#define AGORA_PM_BARINIT_2_(b, n)                                                                                      \
    {                                                                                                                  \
        agora_parmacs_check_(agora_thread_barrier_init(&(b), (unsigned)(n)), "BARINIT", #b);                           \
    }
#define BARINIT(...) AGORA_PM_2OR1_(AGORA_PM_BARINIT_2_, AGORA_PM_BARINIT_1_, __VA_ARGS__)(__VA_ARGS__)
#define AGORA_PM_BARRIER_1_(b)                                                                                         \
    {                                                                                                                  \
        agora_parmacs_check_(agora_thread_barrier_wait(&(b)), "BARRIER", #b);                                          \
    }
#define AGORA_PM_BARRIER_2_(b, n)                                                                                      \
    {                                                                                                                  \
        agora_parmacs_check_(agora_thread_barrier_wait_count(&(b), (unsigned)(n)), "BARRIER", #b);                     \
    }
#define BARRIER(...) AGORA_PM_2OR1_(AGORA_PM_BARRIER_2_, AGORA_PM_BARRIER_1_, __VA_ARGS__)(__VA_ARGS__)
#define BAREXCLUDE(...)                                                                                                \
    {                                                                                                                  \
        ;                                                                                                              \
    }
#define BARINCLUDE(...)                                                                                                \
    {                                                                                                                  \
        ;                                                                                                              \
    }

/* ---- Pause flags (set/clear/wait; PAUSE waits for the flag and clears it) ---- */
#define PAUSEDEC(p)                                                                                                    \
    struct {                                                                                                           \
        agora_lock_t lock;                                                                                             \
        agora_cond_t cond;                                                                                             \
        long flag;                                                                                                     \
    } p; /* NOLINT(bugprone-macro-parentheses): p is declared */
#define PAUSEINIT(p)                                                                                                   \
    {                                                                                                                  \
        memset(&(p), 0, sizeof(p));                                                                                    \
    }
#define SETPAUSE(p)                                                                                                    \
    {                                                                                                                  \
        LOCK((p).lock)                                                                                                 \
        (p).flag = 1;                                                                                                  \
        agora_cond_broadcast(&(p).cond);                                                                               \
        UNLOCK((p).lock)                                                                                               \
    }
#define CLEARPAUSE(p)                                                                                                  \
    {                                                                                                                  \
        LOCK((p).lock)(p).flag = 0;                                                                                    \
        UNLOCK((p).lock)                                                                                               \
    }
#define WAITPAUSE(p)                                                                                                   \
    {                                                                                                                  \
        LOCK((p).lock)                                                                                                 \
        while (!(p).flag)                                                                                              \
            agora_cond_wait(&(p).cond, &(p).lock);                                                                     \
        UNLOCK((p).lock)                                                                                               \
    }
#define PAUSE(p)                                                                                                       \
    {                                                                                                                  \
        LOCK((p).lock)                                                                                                 \
        while (!(p).flag)                                                                                              \
            agora_cond_wait(&(p).cond, &(p).lock);                                                                     \
        (p).flag = 0;                                                                                                  \
        UNLOCK((p).lock)                                                                                               \
    }
#define EVENT(...)                                                                                                     \
    {                                                                                                                  \
        ;                                                                                                              \
    }

/* ---- Semaphores ---- */
#define SEMDEC(s) agora_sem_t s;
#define SEMINIT(s, v)                                                                                                  \
    {                                                                                                                  \
        agora_parmacs_check_(agora_sem_init(&(s), (unsigned)(v)), "SEMINIT", #s);                                      \
    }
#define SEMP(s)                                                                                                        \
    {                                                                                                                  \
        agora_parmacs_check_(agora_sem_wait(&(s)), "SEMP", #s);                                                        \
    }
#define SEMV(s)                                                                                                        \
    {                                                                                                                  \
        agora_parmacs_check_(agora_sem_post(&(s)), "SEMV", #s);                                                        \
    }

/* ---- Self-scheduling counters ---- */
#define GSDEC(g)                                                                                                       \
    struct {                                                                                                           \
        agora_lock_t lock;                                                                                             \
        long value;                                                                                                    \
    } g; /* NOLINT(bugprone-macro-parentheses): g is declared */
#define GSINIT(g)                                                                                                      \
    {                                                                                                                  \
        memset(&(g), 0, sizeof(g));                                                                                    \
    }
#define GETSUB(g, sub, limit, nproc)                                                                                   \
    {                                                                                                                  \
        LOCK((g).lock)                                                                                                 \
        if ((g).value <= (limit))                                                                                      \
            (sub) = (g).value++;                                                                                       \
        else {                                                                                                         \
            (sub) = -1;                                                                                                \
            (g).value = 0;                                                                                             \
        }                                                                                                              \
        UNLOCK((g).lock)                                                                                               \
    }
#define NU_GSDEC(g) GSDEC(g)
#define NU_GSINIT(g) GSINIT(g)
#define NU_GETSUB(g, sub, limit, nproc) GETSUB(g, sub, limit, nproc)
#define ADEC(a) long a;
#define AINIT(...)                                                                                                     \
    {                                                                                                                  \
        ;                                                                                                              \
    }
#define PROBEND(...)                                                                                                   \
    {                                                                                                                  \
        ;                                                                                                              \
    }

/* ---- Time ---- */
#define CLOCK(t)                                                                                                       \
    {                                                                                                                  \
        (t) = (unsigned long)(agora_wtime() * 1e6);                                                                    \
    }
#define AUG_DELAY(s)                                                                                                   \
    {                                                                                                                  \
        sleep(s);                                                                                                      \
    }

/* ---- Tracing, augmentation and monitors: nothing, as in c.m4.null ---- */
#define AUG_ON
#define AUG_OFF
#define TRACE_ON
#define TRACE_OFF
#define REF_TRACE_ON
#define REF_TRACE_OFF
#define DYN_TRACE_ON ;
#define DYN_TRACE_OFF ;
#define DYN_REF_TRACE_ON ;
#define DYN_REF_TRACE_OFF ;
#define DYN_SIM_ON ;
#define DYN_SIM_OFF ;
#define DYN_SCHED_ON ;
#define DYN_SCHED_OFF ;
#define AUG_SET_LOLIMIT(...) ;
#define AUG_SET_HILIMIT(...) ;
#define ST_LOG(...)                                                                                                    \
    {                                                                                                                  \
        ;                                                                                                              \
    }
#define MENTER(...)                                                                                                    \
    {                                                                                                                  \
        ;                                                                                                              \
    }
#define DELAY(...)                                                                                                     \
    {                                                                                                                  \
        ;                                                                                                              \
    }
#define CONTINUE(...)                                                                                                  \
    {                                                                                                                  \
        ;                                                                                                              \
    }
#define MEXIT(...)                                                                                                     \
    {                                                                                                                  \
        ;                                                                                                              \
    }
#define MONINIT(...)                                                                                                   \
    {                                                                                                                  \
        ;                                                                                                              \
    }

#endif /* AGORA_PARMACS_H */
