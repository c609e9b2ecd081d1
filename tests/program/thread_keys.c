/* Thread-specific data in program mode: keys made by main (rank 0) and by
 * a thread on another rank are keys on every rank; values are per thread;
 * destructors run for every thread that set a value, on its rank, with its
 * value, before its join returns (pthread_exit too), again when a
 * destructor sets a value, at most PTHREAD_DESTRUCTOR_ITERATIONS rounds;
 * deleted keys; C11 tss_* and call_once.
 *
 * thread_keys [THREADS] */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>
#include <unistd.h>

#include <agora/agora.h>

#include "../mpi/check.h"

enum { MAX = 16 };
struct cell {
    int thread;
    int seen;     /* key1's destructor calls with this cell */
    int again;    /* key1's destructor set the value again once */
    int tss_seen; /* tss1's destructor calls */
    int seen2;    /* key2's destructor calls */
    int forever;  /* key_forever's destructor calls: it always sets the value again */
};
struct cell cells[MAX], cells2[MAX];
pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_key_t key1, key_plain, key2, key_forever;
int key2_made;
tss_t tss1;
once_flag once = ONCE_FLAG_INIT;
int once_runs, dtor1_calls, dtor2_calls, tss_calls;
int ranks[MAX];
pid_t pids[MAX];

static void dtor1(void *v)
{
    struct cell *c = v;
    pthread_mutex_lock(&mutex);
    dtor1_calls++;
    c->seen++;
    int again = !c->again;
    c->again = 1;
    pthread_mutex_unlock(&mutex);
    /* A value set by a destructor gets another round. */
    if (again) CHECK(pthread_setspecific(key1, c) == 0, "setspecific in a destructor");
}

/* Sets its value again every time: POSIX stops after
 * PTHREAD_DESTRUCTOR_ITERATIONS rounds. */
static void dtor_forever(void *v)
{
    struct cell *c = v;
    pthread_mutex_lock(&mutex);
    c->forever++;
    pthread_mutex_unlock(&mutex);
    CHECK(pthread_setspecific(key_forever, c) == 0, "setspecific in a destructor");
}

static void dtor2(void *v)
{
    struct cell *c = v;
    pthread_mutex_lock(&mutex);
    dtor2_calls++;
    c->seen2++;
    pthread_mutex_unlock(&mutex);
}

static void tss_dtor(void *v)
{
    struct cell *c = v;
    pthread_mutex_lock(&mutex);
    tss_calls++;
    c->tss_seen++;
    pthread_mutex_unlock(&mutex);
}

static void once_init(void) { once_runs++; }

static void *phase1(void *arg)
{
    int i = (int)(intptr_t)arg;
    struct cell *c = &cells[i];
    c->thread = i;
    ranks[i] = agora_rank();
    pids[i] = getpid();
    CHECK(pthread_getspecific(key1) == NULL, "thread %d: a new thread's value is NULL", i);
    int rc = pthread_setspecific(key1, c);
    CHECK(rc == 0, "thread %d on rank %d: pthread_setspecific = %d", i, agora_rank(), rc);
    CHECK(pthread_setspecific(key_plain, (void *)(intptr_t)(100 + i)) == 0, "thread %d: key without destructor", i);
    CHECK(tss_set(tss1, c) == thrd_success, "thread %d: tss_set", i);
    CHECK(pthread_setspecific(key_forever, c) == 0, "thread %d: setspecific(key_forever)", i);
    call_once(&once, once_init);
    if (i == 1) {
        /* A key made on this thread's rank (rank 1 on 2 ranks), for main and phase 2. */
        pthread_key_t k;
        CHECK(pthread_key_create(&k, dtor2) == 0, "thread 1: pthread_key_create");
        pthread_mutex_lock(&mutex);
        key2 = k;
        key2_made = 1;
        pthread_mutex_unlock(&mutex);
    }
    for (int round = 0; round < 3; ++round) {
        CHECK(pthread_getspecific(key1) == c, "thread %d: getspecific(key1)", i);
        CHECK(pthread_getspecific(key_plain) == (void *)(intptr_t)(100 + i), "thread %d: getspecific(plain)", i);
        CHECK(tss_get(tss1) == c, "thread %d: tss_get", i);
        usleep(1000);
    }
    if (i == 1) pthread_exit(NULL); /* destructors run for pthread_exit too */
    return NULL;
}

static void *phase2(void *arg)
{
    int i = (int)(intptr_t)arg;
    CHECK(pthread_getspecific(key2) == NULL, "phase 2 thread %d: NULL", i);
    CHECK(pthread_setspecific(key2, &cells2[i]) == 0, "phase 2 thread %d on rank %d: setspecific(key2)", i,
          agora_rank());
    CHECK(pthread_getspecific(key2) == &cells2[i], "phase 2 thread %d: getspecific(key2)", i);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    CHECK(n >= 2 && n <= MAX, "THREADS between 2 and %d", MAX);
    CHECK(pthread_key_create(&key1, dtor1) == 0, "pthread_key_create(key1)");
    CHECK(pthread_key_create(&key_plain, NULL) == 0, "pthread_key_create(plain)");
    CHECK(key1 != key_plain, "two keys");
    CHECK(tss_create(&tss1, tss_dtor) == thrd_success, "tss_create");
    CHECK(pthread_key_create(&key_forever, dtor_forever) == 0, "pthread_key_create(forever)");
    CHECK(pthread_setspecific(key1, &cells[MAX - 1]) == 0, "main: setspecific");

    pthread_t t[MAX];
    for (int i = 0; i < n; ++i)
        CHECK(pthread_create(&t[i], NULL, phase1, (void *)(intptr_t)i) == 0, "create");
    for (int i = 0; i < n; ++i)
        CHECK(pthread_join(t[i], NULL) == 0, "join");
    int others = 0;
    for (int i = 0; i < n; ++i) {
        others += ranks[i] != 0;
        CHECK(cells[i].seen == 2, "thread %d (rank %d): key1's destructor saw its value %d times, not 2", i, ranks[i],
              cells[i].seen);
        CHECK(cells[i].tss_seen == 1, "thread %d: tss destructor %d times", i, cells[i].tss_seen);
        CHECK(cells[i].forever == PTHREAD_DESTRUCTOR_ITERATIONS,
              "thread %d: a destructor that always sets again ran %d times, not %d", i, cells[i].forever,
              PTHREAD_DESTRUCTOR_ITERATIONS);
    }
    CHECK(dtor1_calls == 2 * n && tss_calls == n, "destructor calls %d (want %d), tss %d (want %d)", dtor1_calls, 2 * n,
          tss_calls, n);
    CHECK(once_runs == 1, "call_once ran %d times", once_runs);
    CHECK(agora_nranks() == 1 || others > 0, "no thread ran on another rank");
    CHECK(agora_nranks() == 1 || pids[0] != pids[1] || ranks[0] != ranks[1], "threads 0 and 1 on one rank");
    CHECK(pthread_getspecific(key1) == &cells[MAX - 1], "main keeps its own value");

    /* key2, made by thread 1 (on rank 1 with 2 ranks and 2 threads per rank). */
    CHECK(key2_made, "thread 1 made key2");
    CHECK(pthread_setspecific(key2, &cells2[MAX - 1]) == 0, "main: setspecific(key2, made on rank %d)", ranks[1]);
    CHECK(pthread_getspecific(key2) == &cells2[MAX - 1], "main: getspecific(key2)");
    for (int i = 0; i < n; ++i)
        CHECK(pthread_create(&t[i], NULL, phase2, (void *)(intptr_t)i) == 0, "create");
    for (int i = 0; i < n; ++i)
        CHECK(pthread_join(t[i], NULL) == 0, "join");
    for (int i = 0; i < n; ++i)
        CHECK(cells2[i].seen2 == 1, "phase 2 thread %d: destructor %d times", i, cells2[i].seen2);
    CHECK(dtor2_calls == n, "key2's destructor %d times (want %d)", dtor2_calls, n);

    /* Deletion: no destructor runs; the key is gone; a new key's value is NULL. */
    CHECK(pthread_key_delete(key1) == 0, "pthread_key_delete");
    CHECK(pthread_key_delete(key1) == EINVAL, "deleting twice is EINVAL");
    pthread_key_t key3;
    CHECK(pthread_key_create(&key3, NULL) == 0, "pthread_key_create(key3)");
    CHECK(key3 != key1, "a new key differs from the deleted one");
    CHECK(pthread_getspecific(key3) == NULL, "a new key's value is NULL");
    CHECK(pthread_key_delete(key2) == 0 && pthread_key_delete(key3) == 0 && pthread_key_delete(key_plain) == 0 &&
              pthread_key_delete(key_forever) == 0,
          "delete");
    tss_delete(tss1);
    CHECK(dtor1_calls == 2 * n && dtor2_calls == n, "no destructor runs at delete");
    printf("PASS program thread_keys: %d threads, %d on ranks other than 0, %d destructor calls\n", n, others,
           dtor1_calls + dtor2_calls + tss_calls);
    return 0;
}
