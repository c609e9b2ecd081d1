/* The pthreads synchronisation calls of an unmodified program built in
 * program mode, between threads on different ranks (issue 30): rwlocks
 * (shared readers, exclusive writers, try and timed forms), spin locks,
 * pthread_mutex_timedlock under contention (acquired, and ETIMEDOUT),
 * recursive and error-checking mutexes (static initialisers and attributes),
 * sem_timedwait (posted before, posted during, never posted),
 * pthread_cond_timedwait (timeout and signal) and pthread_once. Every count
 * is checked exactly; any mismatch exits 1.
 *
 * sync_shims [ITERATIONS]   (run on 2 ranks with 2 threads per rank: the
 *                            two workers of each phase run on different ranks) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int iterations = 1000;
#include "worker_pair.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* An absolute CLOCK_REALTIME deadline `seconds` from now. */
static struct timespec in(double seconds)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    long ns = t.tv_nsec + (long)(seconds * 1e9);
    t.tv_sec += ns / 1000000000L;
    t.tv_nsec = ns % 1000000000L;
    return t;
}

static void nap(double seconds) { usleep((useconds_t)(seconds * 1e6)); }

static void whoami(long id) { worker_pid[id] = getpid(); }

/* Hand-shakes between the two workers of a phase. */
static sem_t step[4];

/* ---- rwlock ---------------------------------------------------------------- */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long rw_a, rw_b;

static void *rw_counter(void *arg)
{
    long id = (long)arg;
    whoami(id);
    for (int i = 0; i < iterations; ++i) {
        int kind = (i + (int)id) % 4;
        if (kind == 0) {
            CHECK(pthread_rwlock_wrlock(&rw) == 0, "wrlock");
            rw_a++;
            rw_b++;
            CHECK(pthread_rwlock_unlock(&rw) == 0, "unlock (writer)");
        } else if (kind == 1) {
            int rc;
            while ((rc = pthread_rwlock_trywrlock(&rw)) == EBUSY) {
            }
            CHECK(rc == 0, "trywrlock: %d", rc);
            rw_a++;
            rw_b++;
            CHECK(pthread_rwlock_unlock(&rw) == 0, "unlock (try writer)");
        } else if (kind == 2) {
            struct timespec d = in(30);
            CHECK(pthread_rwlock_timedwrlock(&rw, &d) == 0, "timedwrlock");
            rw_a++;
            rw_b++;
            CHECK(pthread_rwlock_unlock(&rw) == 0, "unlock (timed writer)");
        } else {
            int rc = i % 8 < 4 ? pthread_rwlock_rdlock(&rw) : pthread_rwlock_tryrdlock(&rw);
            if (rc == EBUSY) continue;
            CHECK(rc == 0, "rdlock: %d", rc);
            long a = rw_a, b = rw_b;
            CHECK(pthread_rwlock_unlock(&rw) == 0, "unlock (reader)");
            CHECK(a == b, "a reader saw a = %ld, b = %ld", a, b);
        }
    }
    return NULL;
}

/* Readers share the lock; a writer excludes them. Worker 0 holds, worker 1 tries. */
static void *rw_sharing(void *arg)
{
    long id = (long)arg;
    whoami(id);
    if (id == 0) {
        CHECK(pthread_rwlock_rdlock(&rw) == 0, "rdlock (holder)");
        sem_post(&step[0]);
        sem_wait(&step[1]); /* worker 1 read-locked and tried to write */
        CHECK(pthread_rwlock_unlock(&rw) == 0, "unlock (holder, read)");
        sem_post(&step[2]);
        sem_wait(&step[3]); /* worker 1 holds it for writing */
        double t0 = now();
        struct timespec d = in(0.3);
        int rc = pthread_rwlock_timedrdlock(&rw, &d);
        double waited = now() - t0;
        CHECK(rc == ETIMEDOUT, "timedrdlock while another rank writes: %d, want ETIMEDOUT", rc);
        CHECK(waited > 0.25 && waited < 5, "timedrdlock waited %.3f s for a 0.3 s deadline", waited);
        CHECK(pthread_rwlock_tryrdlock(&rw) == EBUSY, "tryrdlock while another rank writes");
        sem_post(&step[0]);
    } else {
        sem_wait(&step[0]); /* worker 0 holds a read lock */
        CHECK(pthread_rwlock_tryrdlock(&rw) == 0, "a second reader (other rank) is refused");
        CHECK(pthread_rwlock_trywrlock(&rw) == EBUSY, "trywrlock while read-locked");
        CHECK(pthread_rwlock_unlock(&rw) == 0, "unlock (second reader)");
        sem_post(&step[1]);
        sem_wait(&step[2]);
        CHECK(pthread_rwlock_wrlock(&rw) == 0, "wrlock after the readers left");
        sem_post(&step[3]);
        sem_wait(&step[0]); /* worker 0 timed out */
        CHECK(pthread_rwlock_unlock(&rw) == 0, "unlock (writer)");
    }
    return NULL;
}

/* ---- spin locks -------------------------------------------------------------- */
static pthread_spinlock_t spin;
static long spin_count;

static void *spin_counter(void *arg)
{
    long id = (long)arg;
    whoami(id);
    for (int i = 0; i < iterations; ++i) {
        if (i % 2) {
            CHECK(pthread_spin_lock(&spin) == 0, "spin_lock");
        } else {
            int rc;
            while ((rc = pthread_spin_trylock(&spin)) == EBUSY) {
            }
            CHECK(rc == 0, "spin_trylock: %d", rc);
        }
        spin_count++;
        CHECK(pthread_spin_unlock(&spin) == 0, "spin_unlock");
    }
    return NULL;
}

/* ---- timedlock ------------------------------------------------------------------ */
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static long timed_count;

static void *timed_contention(void *arg)
{
    long id = (long)arg;
    whoami(id);
    if (id == 0) {
        /* Held 0.3 s: the other rank's timedlock (5 s) gets it when it is free. */
        CHECK(pthread_mutex_lock(&mutex) == 0, "lock");
        sem_post(&step[0]);
        nap(0.3);
        CHECK(pthread_mutex_unlock(&mutex) == 0, "unlock");
        /* Held until the other rank's timedlock (0.3 s) has timed out. */
        sem_wait(&step[1]);
        CHECK(pthread_mutex_lock(&mutex) == 0, "lock");
        sem_post(&step[2]);
        sem_wait(&step[3]);
        CHECK(pthread_mutex_unlock(&mutex) == 0, "unlock");
    } else {
        sem_wait(&step[0]);
        double t0 = now();
        struct timespec d = in(5);
        int rc = pthread_mutex_timedlock(&mutex, &d);
        double waited = now() - t0;
        CHECK(rc == 0, "timedlock of a mutex freed within its deadline: %d", rc);
        CHECK(waited > 0.05 && waited < 4, "timedlock waited %.3f s for a mutex held about 0.3 s", waited);
        if (rc == 0) CHECK(pthread_mutex_unlock(&mutex) == 0, "unlock after timedlock");
        sem_post(&step[1]);
        sem_wait(&step[2]);
        t0 = now();
        d = in(0.3);
        rc = pthread_mutex_timedlock(&mutex, &d);
        waited = now() - t0;
        CHECK(rc == ETIMEDOUT, "timedlock of a mutex held past its deadline: %d, want ETIMEDOUT", rc);
        CHECK(waited > 0.25 && waited < 5, "timedlock timed out after %.3f s for a 0.3 s deadline", waited);
        sem_post(&step[3]);
    }
    return NULL;
}

static void *timed_counter(void *arg)
{
    long id = (long)arg;
    whoami(id);
    for (int i = 0; i < iterations; ++i) {
        struct timespec d = in(30);
        int rc = pthread_mutex_timedlock(&mutex, &d);
        CHECK(rc == 0, "timedlock (counting): %d", rc);
        timed_count++;
        CHECK(pthread_mutex_unlock(&mutex) == 0, "unlock (counting)");
    }
    return NULL;
}

/* ---- recursive and error-checking mutexes --------------------------------------- */
static pthread_mutex_t recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_mutex_t *recursive_attr, *errorcheck_attr; /* malloc'd, initialised with attributes */
static long recursive_count;

static void recursive_rules(pthread_mutex_t *m, const char *which)
{
    CHECK(pthread_mutex_lock(m) == 0, "%s: first lock", which);
    CHECK(pthread_mutex_lock(m) == 0, "%s: second lock (recursive)", which);
    CHECK(pthread_mutex_trylock(m) == 0, "%s: trylock by the owner", which);
    struct timespec d = in(1);
    CHECK(pthread_mutex_timedlock(m, &d) == 0, "%s: timedlock by the owner", which);
    for (int i = 0; i < 4; ++i)
        CHECK(pthread_mutex_unlock(m) == 0, "%s: unlock %d of 4", which, i + 1);
    CHECK(pthread_mutex_unlock(m) == EPERM, "%s: unlock of an unlocked mutex", which);
}

static void errorcheck_rules(pthread_mutex_t *m, const char *which)
{
    CHECK(pthread_mutex_unlock(m) == EPERM, "%s: unlock before lock", which);
    CHECK(pthread_mutex_lock(m) == 0, "%s: lock", which);
    CHECK(pthread_mutex_lock(m) == EDEADLK, "%s: relock", which);
    CHECK(pthread_mutex_trylock(m) == EBUSY, "%s: trylock by the owner", which);
    struct timespec d = in(1);
    CHECK(pthread_mutex_timedlock(m, &d) == EDEADLK, "%s: timedlock by the owner", which);
    CHECK(pthread_mutex_unlock(m) == 0, "%s: unlock", which);
    CHECK(pthread_mutex_unlock(m) == EPERM, "%s: second unlock", which);
}

static void *mutex_types(void *arg)
{
    long id = (long)arg;
    whoami(id);
    recursive_rules(id ? &recursive : recursive_attr, id ? "static recursive" : "recursive (attr)");
    errorcheck_rules(id ? &errorcheck : errorcheck_attr, id ? "static errorcheck" : "errorcheck (attr)");
    /* Counting under nested locks of one recursive mutex from both ranks. */
    for (int i = 0; i < iterations; ++i) {
        CHECK(pthread_mutex_lock(&recursive) == 0, "nested lock 1");
        CHECK(pthread_mutex_lock(&recursive) == 0, "nested lock 2");
        recursive_count++;
        CHECK(pthread_mutex_unlock(&recursive) == 0, "nested unlock 2");
        CHECK(pthread_mutex_unlock(&recursive) == 0, "nested unlock 1");
    }
    /* Ownership: a thread on the other rank may not unlock. */
    if (id == 0) {
        CHECK(pthread_mutex_lock(&errorcheck) == 0, "errorcheck lock (owner)");
        sem_post(&step[0]);
        sem_wait(&step[1]);
        CHECK(pthread_mutex_unlock(&errorcheck) == 0, "errorcheck unlock (owner)");
    } else {
        sem_wait(&step[0]);
        CHECK(pthread_mutex_unlock(&errorcheck) == EPERM, "errorcheck unlock by a thread of another rank");
        CHECK(pthread_mutex_trylock(&errorcheck) == EBUSY, "errorcheck trylock held by another rank");
        sem_post(&step[1]);
    }
    return NULL;
}

/* ---- sem_timedwait ------------------------------------------------------------- */
static sem_t posted, never, later;

static void *sem_timeouts(void *arg)
{
    long id = (long)arg;
    whoami(id);
    if (id == 0) {
        CHECK(sem_post(&posted) == 0, "post");
        sem_post(&step[0]);
        sem_wait(&step[1]);
        nap(0.2);
        CHECK(sem_post(&later) == 0, "post (later)");
    } else {
        sem_wait(&step[0]);
        nap(0.5); /* posted half a second ago */
        double t0 = now();
        struct timespec d = in(1);
        int rc = sem_timedwait(&posted, &d);
        double waited = now() - t0;
        CHECK(rc == 0, "sem_timedwait of a semaphore posted earlier: %d (errno %d)", rc, rc ? errno : 0);
        CHECK(waited < 0.5, "sem_timedwait of a posted semaphore took %.3f s", waited);
        /* Posted, and the deadline already passed: it still succeeds. */
        CHECK(sem_post(&posted) == 0, "post");
        d = in(-1);
        CHECK(sem_timedwait(&posted, &d) == 0, "sem_timedwait with a past deadline, posted");
        t0 = now();
        d = in(0.3);
        rc = sem_timedwait(&never, &d);
        int err = errno;
        waited = now() - t0;
        CHECK(rc == -1 && err == ETIMEDOUT, "sem_timedwait never posted: %d (errno %d), want -1 ETIMEDOUT", rc, err);
        CHECK(waited > 0.25 && waited < 5, "sem_timedwait timed out after %.3f s for a 0.3 s deadline", waited);
        sem_post(&step[1]);
        t0 = now();
        d = in(5);
        rc = sem_timedwait(&later, &d);
        waited = now() - t0;
        CHECK(rc == 0, "sem_timedwait posted during the wait: %d (errno %d)", rc, rc ? errno : 0);
        CHECK(waited > 0.05 && waited < 4, "sem_timedwait posted after 0.2 s returned after %.3f s", waited);
    }
    return NULL;
}

/* ---- pthread_cond_timedwait -------------------------------------------------- */
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int flag;

static void *cond_timeouts(void *arg)
{
    long id = (long)arg;
    whoami(id);
    if (id == 0) {
        sem_wait(&step[0]);
        nap(0.2);
        CHECK(pthread_mutex_lock(&mutex) == 0, "lock (signaller)");
        flag = 1;
        CHECK(pthread_cond_signal(&cond) == 0, "signal");
        CHECK(pthread_mutex_unlock(&mutex) == 0, "unlock (signaller)");
    } else {
        CHECK(pthread_mutex_lock(&mutex) == 0, "lock (waiter)");
        double t0 = now();
        struct timespec d = in(0.3);
        int rc = pthread_cond_timedwait(&cond, &mutex, &d);
        double waited = now() - t0;
        CHECK(rc == ETIMEDOUT, "cond_timedwait with no signal: %d, want ETIMEDOUT", rc);
        CHECK(waited > 0.25 && waited < 5, "cond_timedwait timed out after %.3f s for a 0.3 s deadline", waited);
        sem_post(&step[0]);
        d = in(10);
        rc = 0;
        while (!flag && rc == 0)
            rc = pthread_cond_timedwait(&cond, &mutex, &d);
        CHECK(rc == 0 && flag, "cond_timedwait signalled: %d, flag %d", rc, flag);
        CHECK(pthread_mutex_unlock(&mutex) == 0, "unlock (waiter: held again on return)");
    }
    return NULL;
}

/* ---- pthread_once ---------------------------------------------------------------- */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs, once_value;

static void once_init(void)
{
    once_runs++;
    nap(0.05); /* the other callers arrive meanwhile */
    once_value = 42;
}

static void *once_callers(void *arg)
{
    long id = (long)arg;
    whoami(id);
    CHECK(pthread_once(&once, once_init) == 0, "pthread_once");
    CHECK(once_value == 42, "after pthread_once the init's write is missing: %d", once_value);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) iterations = atoi(argv[1]);
    for (int i = 0; i < 4; ++i)
        sem_init(&step[i], 0, 0);
    sem_init(&posted, 0, 0);
    sem_init(&never, 0, 0);
    sem_init(&later, 0, 0);
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    recursive_attr = malloc(sizeof *recursive_attr);
    errorcheck_attr = malloc(sizeof *errorcheck_attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    CHECK(pthread_mutex_init(recursive_attr, &attr) == 0, "init recursive");
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    CHECK(pthread_mutex_init(errorcheck_attr, &attr) == 0, "init errorcheck");
    pthread_mutexattr_destroy(&attr);

    run_pair("rwlock counter", rw_counter);
    long writes = 0;
    for (long id = 0; id < 2; ++id)
        for (int i = 0; i < iterations; ++i)
            writes += (i + id) % 4 < 3;
    CHECK(rw_a == writes && rw_b == writes, "rwlock: a = %ld, b = %ld, want %ld", rw_a, rw_b, writes);
    run_pair("rwlock sharing", rw_sharing);
    CHECK(pthread_rwlock_destroy(&rw) == 0, "rwlock destroy");

    run_pair("spin", spin_counter);
    CHECK(spin_count == 2L * iterations, "spin: count %ld, want %ld", spin_count, 2L * iterations);
    CHECK(pthread_spin_destroy(&spin) == 0, "spin destroy");

    run_pair("timedlock contention", timed_contention);
    run_pair("timedlock counter", timed_counter);
    CHECK(timed_count == 2L * iterations, "timedlock: count %ld, want %ld", timed_count, 2L * iterations);

    run_pair("mutex types", mutex_types);
    CHECK(recursive_count == 2L * iterations, "recursive: count %ld, want %ld", recursive_count, 2L * iterations);

    run_pair("sem_timedwait", sem_timeouts);
    run_pair("cond_timedwait", cond_timeouts);

    run_pair("pthread_once", once_callers);
    CHECK(pthread_once(&once, once_init) == 0, "pthread_once (main)");
    CHECK(once_runs == 1, "pthread_once ran its routine %d times in the job", once_runs);

    if (failures) {
        printf("FAIL program sync_shims: %d failures\n", failures);
        return 1;
    }
    printf("PASS program sync_shims (%d iterations)\n", iterations);
    return 0;
}
