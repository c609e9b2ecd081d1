/* A hand-written barrier that busy-waits on pthread_mutex_trylock (issue 26,
 * "Busy-waiting"), as unmodified programs write it: a thread takes the
 * mutex by spinning on trylock, counts its arrival, and then spins reading
 * the generation number under the mutex (taken by trylock again) until the
 * last arriver bumps it. The same rounds then run on pthread_barrier_wait.
 *
 * Each round every thread writes its slot of a double-buffered array before
 * the barrier and checks every other thread's slot after it, so a barrier
 * that lets a thread through early (or data that did not travel with the
 * mutex) is counted; arrivals and generations are checked exactly. Prints
 * both times; any mismatch exits 1.
 *
 * trylock_spin [ROUNDS] [THREADS]   (defaults 200 and 4: 2 ranks x 2 threads) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 16

static int rounds = 200;
static int nthreads = 4;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ---- the hand-written barrier ----------------------------------------------- */
static pthread_mutex_t spin_mutex = PTHREAD_MUTEX_INITIALIZER;
static int arrived;      /* arrivals in the current generation (under spin_mutex) */
static int generation;   /* bumped by the last arriver (under spin_mutex) */
static long arrivals;    /* every arrival ever (under spin_mutex) */
static long refused;     /* trylocks that answered EBUSY, summed at the end */
static long odd_answers; /* trylock answers that are neither 0 nor EBUSY */

static long take_by_trylock(pthread_mutex_t *m)
{
    long busy = 0;
    int rc;
    while ((rc = pthread_mutex_trylock(m)) != 0) {
        if (rc != EBUSY) __atomic_add_fetch(&odd_answers, 1, __ATOMIC_RELAXED);
        busy++;
    }
    return busy;
}

static long spin_barrier(void)
{
    long busy = take_by_trylock(&spin_mutex);
    int mine = generation;
    arrivals++;
    if (++arrived == nthreads) {
        arrived = 0;
        generation++;
    }
    pthread_mutex_unlock(&spin_mutex);
    for (;;) {
        busy += take_by_trylock(&spin_mutex);
        int seen = generation;
        pthread_mutex_unlock(&spin_mutex);
        if (seen != mine) return busy;
    }
}

/* ---- the checked rounds ------------------------------------------------------- */
static pthread_barrier_t posix_barrier;
static long slot[2][MAX_THREADS];
static long wrong[2];     /* slots that did not hold the round's value: [spin, posix] */
static double seconds[2]; /* each phase's time, measured by thread 0 */

static long expected(int phase, int r, long id) { return (long)phase * 1000000 + (long)r * MAX_THREADS + id + 1; }

/* Phase 0: the trylock-spin barrier; phase 1: pthread_barrier_wait. Each
 * phase starts and ends with pthread_barrier_wait, so the phases do not
 * overlap and thread 0's clock covers every thread's rounds. */
static void *worker(void *arg)
{
    long id = (long)arg;
    long busy = 0, misses[2] = {0, 0};
    for (int phase = 0; phase < 2; ++phase) {
        pthread_barrier_wait(&posix_barrier);
        double t0 = now();
        for (int r = 0; r < rounds; ++r) {
            long *row = slot[r & 1];
            row[id] = expected(phase, r, id);
            if (phase == 0)
                busy += spin_barrier();
            else
                pthread_barrier_wait(&posix_barrier);
            for (int j = 0; j < nthreads; ++j)
                if (row[j] != expected(phase, r, j)) misses[phase]++;
        }
        pthread_barrier_wait(&posix_barrier);
        if (id == 0) seconds[phase] = now() - t0;
    }
    pthread_mutex_lock(&spin_mutex);
    wrong[0] += misses[0];
    wrong[1] += misses[1];
    refused += busy;
    pthread_mutex_unlock(&spin_mutex);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) rounds = atoi(argv[1]);
    if (argc > 2) nthreads = atoi(argv[2]);
    if (rounds < 1 || nthreads < 2 || nthreads > MAX_THREADS) {
        fprintf(stderr, "usage: trylock_spin [ROUNDS >= 1] [THREADS 2..%d]\n", MAX_THREADS);
        return 2;
    }
    pthread_barrier_init(&posix_barrier, NULL, nthreads);
    pthread_t t[MAX_THREADS];
    for (long i = 0; i < nthreads; ++i)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
            fprintf(stderr, "FAIL: pthread_create\n");
            return 1;
        }
    for (int i = 0; i < nthreads; ++i)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&posix_barrier);

    int ok = wrong[0] == 0 && wrong[1] == 0 && odd_answers == 0 && arrivals == (long)rounds * nthreads &&
             generation == rounds && arrived == 0;
    printf("trylock barrier: %d rounds x %d threads in %.3f s (%.1f us a round, %ld refused trylocks)\n", rounds,
           nthreads, seconds[0], seconds[0] / rounds * 1e6, refused);
    printf("pthread_barrier_wait: %d rounds in %.3f s (%.1f us a round); ratio %.2f\n", rounds, seconds[1],
           seconds[1] / rounds * 1e6, seconds[0] / seconds[1]);
    printf("TRYLOCK_RESULT {\"rounds\": %d, \"threads\": %d, \"trylock_s\": %.6f, \"barrier_s\": %.6f, "
           "\"refused\": %ld}\n",
           rounds, nthreads, seconds[0], seconds[1], refused);
    if (!ok) {
        printf("FAIL program trylock_spin: wrong slots %ld (spin) %ld (pthread_barrier_wait), arrivals %ld of %ld, "
               "generation %d of %d, %d left arrived, %ld answers neither 0 nor EBUSY\n",
               wrong[0], wrong[1], arrivals, (long)rounds * nthreads, generation, rounds, arrived, odd_answers);
        return 1;
    }
    printf("PASS program trylock_spin: %d rounds x %d threads, every slot right\n", rounds, nthreads);
    return 0;
}
