/* Synchronisation among fork-join threads on any ranks: thread barriers,
 * condition variables, semaphores, address-named locks and trylock, the
 * pthreads shim (this program is linked with src/program/agora-program.wrap,
 * so its pthread_* and sem_* calls go to the shim), and the misuse errors.
 * Main runs on rank 0 and places threads with the placement rule; all shared
 * state is agora_malloc'd (this program's C globals are per rank).
 *
 * threadsync barrier N ROUNDS | condvar N ITEMS | sem N ITEMS | locks N ITERS
 *          | shim N ROUNDS | misuse | never_met | count_mismatch            */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { MAX_THREADS = 64, QUEUE = 4, COUNTERS = 4 };

struct ctx {
    long n, rounds, items;
    agora_thread_barrier_t barrier, counted; /* counted: wait_count, never initialised */
    long data[MAX_THREADS];
    agora_lock_t lock; /* address-named (zero) */
    long serial, consumed_sum, consumed_count, produced;
    /* bounded buffer */
    long queue[QUEUE];
    long head, tail, size;
    agora_cond_t not_empty, not_full;
    agora_sem_t empty, full;
    /* locks */
    agora_lock_t locks[COUNTERS];
    long counters[COUNTERS];
    agora_lock_t *created; /* agora_lock_create by main: a handle in global memory */
    long created_counter;
    /* shim */
    pthread_mutex_t mutex;
    pthread_barrier_t pbarrier;
    pthread_cond_t pcond;
    sem_t psem;
    pthread_once_t once;
    long once_runs, go;
    uint64_t self[MAX_THREADS];
};

static struct ctx *C;
struct arg {
    struct ctx *c;
    long i;
};

static void *barrier_worker(void *p)
{
    struct arg *a = p;
    struct ctx *c = a->c;
    for (long r = 1; r <= c->rounds; r++) {
        c->data[a->i] = r * 1000 + a->i;
        int s = agora_thread_barrier_wait(&c->barrier);
        CHECK(s == AGORA_OK || s == AGORA_BARRIER_SERIAL, "barrier returned %d", s);
        if (s == AGORA_BARRIER_SERIAL) c->serial++; /* one per round: no lock needed */
        for (long j = 0; j < c->n; j++)
            CHECK(c->data[j] == r * 1000 + j, "round %ld: thread %ld sees data[%ld] = %ld", r, a->i, j, c->data[j]);
        s = agora_thread_barrier_wait_count(&c->counted, (unsigned)c->n);
        CHECK(s == AGORA_OK || s == AGORA_BARRIER_SERIAL, "barrier (count) returned %d", s);
    }
    return NULL;
}

static void *cond_producer(void *p)
{
    struct arg *a = p;
    struct ctx *c = a->c;
    for (;;) {
        agora_lock(&c->lock);
        if (c->produced == c->items) {
            agora_unlock(&c->lock);
            return NULL;
        }
        long item = ++c->produced;
        while (c->size == QUEUE)
            CHECK(agora_cond_wait(&c->not_full, &c->lock) == AGORA_OK, "cond_wait");
        c->queue[c->tail] = item;
        c->tail = (c->tail + 1) % QUEUE;
        c->size++;
        agora_cond_signal(&c->not_empty);
        agora_unlock(&c->lock);
    }
}

static void *cond_consumer(void *p)
{
    struct arg *a = p;
    struct ctx *c = a->c;
    for (;;) {
        agora_lock(&c->lock);
        while (c->size == 0 && c->consumed_count < c->items)
            CHECK(agora_cond_wait(&c->not_empty, &c->lock) == AGORA_OK, "cond_wait");
        if (c->consumed_count == c->items) {
            agora_cond_broadcast(&c->not_empty); /* wake the other consumers: all done */
            agora_unlock(&c->lock);
            return NULL;
        }
        long item = c->queue[c->head];
        c->head = (c->head + 1) % QUEUE;
        c->size--;
        c->consumed_sum += item;
        c->consumed_count++;
        if (c->consumed_count == c->items) agora_cond_broadcast(&c->not_empty);
        agora_cond_signal(&c->not_full);
        agora_unlock(&c->lock);
    }
}

/* Semaphores: producers write the slot outside any lock; the post (release)
 * and the wait (acquire) carry the item to the consumer.
 *
 * The semaphores count free and filled slots, not which ones: a producer
 * given a free-slot permit by one consumer may take the slot whose item
 * another consumer has not read yet (with slots handed out in turn, as
 * here). An earlier version raced there, under pthreads semantics too: the
 * consumer then read the newer item (a wrong sum), and the next consumer of
 * that slot waited for a flag set only once (a hang). So each slot's state
 * names its turn: turns count items from 0 (tail, head: running counts),
 * slot = turn % QUEUE, state 2t+1 once item t is in it and 2t+2 once it was
 * read; a producer of turn t waits for turn t-QUEUE to be read, a consumer
 * of turn t for it to be filled. */
static void wait_slot_state(struct ctx *c, long slot, long state)
{
    for (;;) {
        agora_lock(&c->lock);
        long now = c->data[slot];
        agora_unlock(&c->lock);
        if (now == state) return;
    }
}

static void *sem_producer(void *p)
{
    struct arg *a = p;
    struct ctx *c = a->c;
    long nprod = c->n / 2;
    for (long item = a->i + 1; item <= c->items; item += nprod) {
        CHECK(agora_sem_wait(&c->empty) == AGORA_OK, "sem_wait empty");
        agora_lock(&c->lock);
        long turn = c->tail++;
        agora_unlock(&c->lock);
        long slot = turn % QUEUE;
        wait_slot_state(c, slot, turn < QUEUE ? 0 : 2 * (turn - QUEUE) + 2);
        c->queue[slot] = item;
        agora_lock(&c->lock);
        c->data[slot] = 2 * turn + 1;
        agora_unlock(&c->lock);
        CHECK(agora_sem_post(&c->full) == AGORA_OK, "sem_post full");
    }
    return NULL;
}

static void *sem_consumer(void *p)
{
    struct arg *a = p;
    struct ctx *c = a->c;
    long ncons = c->n - c->n / 2;
    long mine = c->items / ncons + (a->i - c->n / 2 < c->items % ncons);
    for (long k = 0; k < mine; k++) {
        CHECK(agora_sem_wait(&c->full) == AGORA_OK, "sem_wait full");
        agora_lock(&c->lock);
        long turn = c->head++;
        agora_unlock(&c->lock);
        long slot = turn % QUEUE;
        /* The item was written before the store of its state, which this
         * thread's lock acquires see (rule 2), and the producer's next span
         * started after it (rule 1). */
        wait_slot_state(c, slot, 2 * turn + 1);
        long item = c->queue[slot];
        CHECK(item >= 1 && item <= c->items, "consumer %ld: slot %ld holds %ld", a->i, slot, item);
        agora_lock(&c->lock);
        c->consumed_sum += item;
        c->consumed_count++;
        c->data[slot] = 2 * turn + 2;
        agora_unlock(&c->lock);
        CHECK(agora_sem_post(&c->empty) == AGORA_OK, "sem_post empty");
    }
    return NULL;
}

static void *locks_worker(void *p)
{
    struct arg *a = p;
    struct ctx *c = a->c;
    for (long k = 0; k < c->items; k++) {
        int which = (int)((a->i + k) % COUNTERS);
        if (k % 3 == 0) {
            int s;
            while ((s = agora_trylock(&c->locks[which])) == AGORA_BUSY) {
            }
            CHECK(s == AGORA_OK, "trylock returned %d", s);
        } else {
            CHECK(agora_lock(&c->locks[which]) == AGORA_OK, "lock");
        }
        c->counters[which]++;
        CHECK(agora_unlock(&c->locks[which]) == AGORA_OK, "unlock");
        agora_lock(c->created);
        c->created_counter++;
        agora_unlock(c->created);
    }
    return NULL;
}

static void once_init(void) { C->once_runs++; }

static void *shim_worker(void *p)
{
    struct arg *a = p;
    struct ctx *c = a->c;
    C = c; /* this rank's global, for once_init */
    c->self[a->i] = (uint64_t)pthread_self();
    CHECK(pthread_once(&c->once, once_init) == 0, "pthread_once");
    for (long r = 1; r <= c->rounds; r++) {
        CHECK(pthread_mutex_lock(&c->mutex) == 0, "mutex_lock");
        c->counters[0]++;
        CHECK(pthread_mutex_unlock(&c->mutex) == 0, "mutex_unlock");
        c->data[a->i] = r;
        int s = pthread_barrier_wait(&c->pbarrier);
        CHECK(s == 0 || s == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait %d", s);
        if (s == PTHREAD_BARRIER_SERIAL_THREAD) c->serial++;
        for (long j = 0; j < c->n; j++)
            CHECK(c->data[j] == r, "round %ld: data[%ld] = %ld", r, j, c->data[j]);
        s = pthread_barrier_wait(&c->pbarrier);
        CHECK(s == 0 || s == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait %d", s);
    }
    /* Condition variable: wait for main's go. */
    pthread_mutex_lock(&c->mutex);
    while (!c->go)
        CHECK(pthread_cond_wait(&c->pcond, &c->mutex) == 0, "cond_wait");
    pthread_mutex_unlock(&c->mutex);
    CHECK(sem_post(&c->psem) == 0, "sem_post");
    return (void *)(intptr_t)(a->i + 1);
}

static void *block_on_sem(void *p)
{
    struct ctx *c = ((struct arg *)p)->c;
    CHECK(agora_sem_wait(&c->full) == AGORA_OK, "sem_wait");
    return NULL;
}

static void *count_waiter(void *p)
{
    struct arg *a = p;
    agora_thread_barrier_wait_count(&a->c->counted, (unsigned)(2 + a->i)); /* 2 and 3: a mismatch */
    return NULL;
}

static void *never_met(void *p)
{
    agora_thread_barrier_wait(&((struct arg *)p)->c->barrier);
    return NULL;
}

static void run(struct ctx *c, long n, void *(*fn)(void *), void *(*fn2)(void *), long split)
{
    agora_thread_t th[MAX_THREADS];
    struct arg *args = test_malloc(n * sizeof *args);
    CHECK(args, "agora_malloc");
    for (long i = 0; i < n; i++) {
        args[i].c = c;
        args[i].i = i;
        int s = agora_thread_create(&th[i], i < split ? fn : fn2, &args[i]);
        CHECK(s == AGORA_OK, "create %ld: %d", i, s);
    }
    for (long i = 0; i < n; i++)
        CHECK(agora_thread_join(th[i], NULL) == AGORA_OK, "join %ld", i);
    agora_mem_free(args);
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    if (agora_rank() == 0) {
        const char *mode = argc > 1 ? argv[1] : "barrier";
        long n = argc > 2 ? atol(argv[2]) : 2, m = argc > 3 ? atol(argv[3]) : 20;
        CHECK(n >= 1 && n <= MAX_THREADS, "threads %ld", n);
        struct ctx *c = test_malloc(sizeof *c);
        CHECK(c, "agora_malloc");
        memset(c, 0, sizeof *c);
        c->n = n;
        c->rounds = c->items = m;
        int slots = agora_thread_slots();
        CHECK(slots == agora_nranks() * (slots / agora_nranks()) && slots >= agora_nranks(), "slots %d", slots);
        if (!strcmp(mode, "barrier")) {
            CHECK(agora_thread_barrier_init(&c->barrier, (unsigned)n) == AGORA_OK, "init");
            run(c, n, barrier_worker, barrier_worker, n);
            CHECK(c->serial == m, "%ld serial waiters in %ld rounds", c->serial, m);
            CHECK(agora_thread_barrier_destroy(&c->barrier) == AGORA_OK, "destroy");
        } else if (!strcmp(mode, "condvar")) {
            CHECK(agora_cond_init(&c->not_full) == AGORA_OK, "cond_init"); /* not_empty: zero-filled */
            run(c, n, cond_producer, cond_consumer, n / 2);
            CHECK(c->consumed_count == m && c->consumed_sum == m * (m + 1) / 2, "consumed %ld items, sum %ld",
                  c->consumed_count, c->consumed_sum);
            /* timed wait: nobody signals, the deadline passes, the lock is held again */
            agora_lock(&c->lock);
            double t0 = agora_wtime();
            int s = agora_cond_timedwait(&c->not_full, &c->lock, t0 + 0.2);
            CHECK(s == AGORA_TIMEDOUT && agora_wtime() - t0 >= 0.2, "timedwait returned %d", s);
            CHECK(agora_unlock(&c->lock) == AGORA_OK, "the lock is held after a timed out wait");
            CHECK(agora_cond_destroy(&c->not_full) == AGORA_OK, "cond_destroy");
        } else if (!strcmp(mode, "sem")) {
            CHECK(n >= 2, "sem needs 2 threads");
            CHECK(agora_sem_init(&c->empty, QUEUE) == AGORA_OK, "sem_init"); /* full: zero-filled, 0 */
            CHECK(agora_sem_trywait(&c->full) == AGORA_BUSY, "trywait on 0");
            run(c, n, sem_producer, sem_consumer, n / 2);
            CHECK(c->consumed_count == m && c->consumed_sum == m * (m + 1) / 2, "consumed %ld items, sum %ld",
                  c->consumed_count, c->consumed_sum);
            int v = -1;
            CHECK(agora_sem_getvalue(&c->empty, &v) == AGORA_OK && v == QUEUE, "empty holds %d", v);
            CHECK(agora_sem_getvalue(&c->full, &v) == AGORA_OK && v == 0, "full holds %d", v);
            CHECK(agora_sem_destroy(&c->empty) == AGORA_OK, "sem_destroy");
        } else if (!strcmp(mode, "locks")) {
            c->created = test_lock_create();
            CHECK(c->created && agora_is_global(c->created), "lock handle in global memory");
            /* trylock of a lock held by another thread is busy */
            CHECK(agora_lock(&c->locks[0]) == AGORA_OK, "lock");
            CHECK(agora_trylock(&c->locks[0]) == AGORA_BUSY, "trylock of a held lock");
            CHECK(agora_unlock(&c->locks[0]) == AGORA_OK, "unlock");
            run(c, n, locks_worker, locks_worker, n);
            long total = 0;
            for (int k = 0; k < COUNTERS; k++)
                total += c->counters[k];
            CHECK(total == n * m && c->created_counter == n * m, "counters %ld and %ld, expected %ld", total,
                  c->created_counter, n * m);
        } else if (!strcmp(mode, "shim")) {
            C = c;
            CHECK(sysconf(_SC_NPROCESSORS_ONLN) == slots, "sysconf %ld, slots %d", sysconf(_SC_NPROCESSORS_ONLN),
                  slots);
            CHECK(pthread_mutex_init(&c->mutex, NULL) == 0, "mutex_init");
            CHECK(pthread_barrier_init(&c->pbarrier, NULL, (unsigned)n) == 0, "barrier_init");
            CHECK(pthread_cond_init(&c->pcond, NULL) == 0, "cond_init");
            CHECK(sem_init(&c->psem, 0, 0) == 0, "sem_init");
            CHECK(pthread_mutex_trylock(&c->mutex) == 0 && pthread_mutex_trylock(&c->mutex) == EBUSY, "trylock");
            CHECK(pthread_mutex_unlock(&c->mutex) == 0, "unlock");
            /* a private mutex still works (libc's) */
            pthread_mutex_t private_mutex = PTHREAD_MUTEX_INITIALIZER;
            CHECK(pthread_mutex_lock(&private_mutex) == 0 && pthread_mutex_unlock(&private_mutex) == 0,
                  "private mutex");
            pthread_t th[MAX_THREADS];
            struct arg *args = test_malloc(n * sizeof *args);
            for (long i = 0; i < n; i++) {
                args[i] = (struct arg){c, i};
                CHECK(pthread_create(&th[i], NULL, shim_worker, &args[i]) == 0, "pthread_create %ld", i);
            }
            pthread_mutex_lock(&c->mutex);
            c->go = 1;
            pthread_cond_broadcast(&c->pcond);
            pthread_mutex_unlock(&c->mutex);
            for (long i = 0; i < n; i++)
                CHECK(sem_wait(&c->psem) == 0, "sem_wait");
            for (long i = 0; i < n; i++) {
                void *ret = NULL;
                CHECK(pthread_join(th[i], &ret) == 0 && (intptr_t)ret == i + 1, "join %ld returned %ld", i,
                      (long)(intptr_t)ret);
                CHECK(pthread_equal(th[i], (pthread_t)c->self[i]), "pthread_self of %ld", i);
                CHECK(!pthread_equal(th[i], pthread_self()), "main's pthread_self differs");
            }
            CHECK(c->counters[0] == n * m && c->serial == m && c->once_runs == 1, "counter %ld, serial %ld, once %ld",
                  c->counters[0], c->serial, c->once_runs);
            CHECK(sem_trywait(&c->psem) == -1 && errno == EAGAIN, "sem_trywait on 0");
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 50000000;
            if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
            pthread_mutex_lock(&c->mutex);
            CHECK(pthread_cond_timedwait(&c->pcond, &c->mutex, &ts) == ETIMEDOUT, "cond_timedwait");
            pthread_mutex_unlock(&c->mutex);
        } else if (!strcmp(mode, "misuse")) {
            /* Thread-local storage is private memory in every model (this
             * program is built in program mode, where main's stack and
             * globals are global memory). */
            static __thread agora_lock_t private_lock = AGORA_LOCK_INITIALIZER;
            CHECK(agora_lock(&private_lock) == AGORA_ERR_INVALID_ARGUMENT, "a zero lock in private memory");
            static __thread agora_sem_t private_sem;
            CHECK(agora_sem_init(&private_sem, 1) == AGORA_ERR_INVALID_ARGUMENT, "a private semaphore");
            CHECK(agora_thread_barrier_wait(&c->barrier) == AGORA_ERR_INVALID_ARGUMENT, "uninitialised barrier");
            CHECK(agora_cond_wait(&c->not_empty, &c->lock) == AGORA_ERR_NOT_HELD, "cond_wait without the lock");
            /* Built in program mode, where threads may outnumber the slots as
             * pthreads threads outnumber cores (forkjoin.c's `limits` checks
             * the C API's limit outside program mode): one more than the
             * slots all run at once, placed round the ranks again. */
            CHECK(agora_program_mode(), "threadsync is built in program mode");
            agora_thread_t th[MAX_THREADS + 1];
            struct arg *a = test_malloc(sizeof *a); /* main's stack is private here */
            a->c = c;
            a->i = 0;
            CHECK(slots <= MAX_THREADS, "slots %d", slots);
            for (int i = 0; i <= slots; i++)
                CHECK(agora_thread_create(&th[i], block_on_sem, a) == AGORA_OK, "create %d", i);
            for (int i = 0; i <= slots; i++)
                CHECK(agora_sem_post(&c->full) == AGORA_OK, "post");
            for (int i = 0; i <= slots; i++)
                CHECK(agora_thread_join(th[i], NULL) == AGORA_OK, "join");
            CHECK(agora_thread_create(&th[0], block_on_sem, a) == AGORA_OK, "create after joins");
            CHECK(agora_sem_post(&c->full) == AGORA_OK && agora_thread_join(th[0], NULL) == AGORA_OK, "last");
        } else if (!strcmp(mode, "count_mismatch")) {
            run(c, 2, count_waiter, count_waiter, 2);
        } else if (!strcmp(mode, "never_met")) {
            CHECK(agora_thread_barrier_init(&c->barrier, (unsigned)n + 1) == AGORA_OK, "init");
            run(c, n, never_met, never_met, n);
        } else {
            CHECK(0, "unknown mode %s", mode);
        }
        agora_mem_free(c);
        printf("PASS threadsync %s on %d ranks (%s)\n", mode, agora_nranks(), agora_protocol_name());
    }
    agora_finalize();
    return 0;
}
