/* Programs that fail on purpose, for tests/mpi/expect_failure.sh:
 *   misbehave exit|kill|abort     rank 1 dies that way while the others wait
 *   misbehave segv                a wild pointer outside global memory
 *   misbehave unallocated         a global address no allocation covers
 *   misbehave extra_barrier       rank 1 calls one barrier more than the others
 *   misbehave alloc_one_rank      only rank 0 calls agora_alloc
 *   misbehave reduce_count|reduce_type   ranks pass different reduce arguments
 *   misbehave reduce_huge         rank 1 passes a reduce count too large for one
 *                                 message (an error there), rank 0 a normal one
 *   misbehave lock_count          rank 0 creates one lock more, first
 *   misbehave deadlock            each rank holds its lock and waits for the next rank's
 *   misbehave finalize_holding    rank 1 finalizes holding a lock rank 0 waits for
 *   misbehave stop                rank 1 stops (SIGSTOP) while rank 0 waits in a barrier
 *   misbehave outside SECONDS     rank 1 computes outside Agora for a while (a warning; passes)
 *   misbehave occupied            a page mapped at 32 TiB + 2 GiB, inside the
 *                                 global range, before agora_init
 *   misbehave cyclic_maps         a cyclic allocation of more pages than
 *                                 vm.max_map_count lets a rank protect apart
 *   misbehave alloc_differ        test_alloc(2^63) on rank 0, test_alloc(0)
 *                                 elsewhere (-2^63 == 2^63 in int64)
 *   misbehave ok                  does nothing wrong
 * Misuse that returns an error at once (the program checks it and passes):
 *   misbehave lock_twice          a thread locks a lock it holds
 *   misbehave barrier_threads     two threads of rank 0 call agora_barrier
 *   misbehave barrier_agora_thread  a fork-join thread calls agora_barrier
 *   misbehave init_again          agora_init after agora_finalize: AGORA_ERR_MISUSE
 *                                 and a message (was Open MPI's abort) */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

static void *second_barrier(void *arg)
{
    (void)arg;
    usleep(200 * 1000); /* main is in the barrier by now; rank 1 is not */
    int status = agora_barrier();
    CHECK(status == AGORA_ERR_MISUSE, "a second thread's barrier returned %d", status);
    return NULL;
}

static void *thread_barrier(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)agora_barrier();
}

static int argc_saved;
static char **argv_saved;

/* Misuse the runtime reports at once; returns 1 if `how` was one of them. */
static int misuse_at_once(const char *how)
{
    if (!strcmp(how, "lock_twice")) {
        agora_lock_t *lk = test_lock_create();
        CHECK(agora_lock(lk) == 0, "lock failed");
        int status = agora_lock(lk);
        CHECK(status == AGORA_ERR_DEADLOCK, "locking a held lock returned %d", status);
        CHECK(agora_unlock(lk) == 0, "the lock is no longer held after the refused relock");
        CHECK(agora_unlock(lk) == AGORA_ERR_NOT_HELD, "unlocked twice");
    } else if (!strcmp(how, "barrier_threads")) {
        pthread_t t;
        if (agora_rank() == 0) pthread_create(&t, NULL, second_barrier, NULL);
        if (agora_rank() == 1) usleep(1000 * 1000);
        CHECK(agora_barrier() == 0, "main's barrier failed");
        if (agora_rank() == 0) pthread_join(t, NULL);
    } else if (!strcmp(how, "barrier_agora_thread")) {
        if (agora_rank() == 0) {
            agora_thread_t t;
            void *ret = NULL;
            CHECK(agora_thread_create_on(&t, agora_nranks() - 1, thread_barrier, NULL) == 0, "create");
            CHECK(agora_thread_join(t, &ret) == 0, "join");
            CHECK((intptr_t)ret == AGORA_ERR_MISUSE, "agora_barrier in an agora thread returned %d",
                  (int)(intptr_t)ret);
        }
        agora_finalize();
        PASS(how);
        exit(0);
    } else if (!strcmp(how, "init_again")) {
        int me = agora_rank();
        agora_finalize();
        int status = agora_init(&argc_saved, &argv_saved);
        if (status != AGORA_ERR_MISUSE) {
            fprintf(stderr, "rank %d: agora_init after agora_finalize returned %d\n", me, status);
            exit(1);
        }
        if (me == 0) printf("PASS %s\n", how);
        exit(0);
    } else {
        return 0;
    }
    agora_barrier();
    agora_finalize();
    PASS(how);
    exit(0);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "ok";
    if (!strcmp(how, "occupied") && mmap((void *)(0x200000000000ull + (2ull << 30)), 4096, PROT_READ,
                                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED) {
        perror("mmap");
        return 0; /* the test expects a failure: this one would not be agora's */
    }
    agora_init(&argc, &argv);
    argc_saved = argc, argv_saved = argv;
    misuse_at_once(how);
    int *data = test_alloc(4096 * 4);
    agora_barrier();
    int me = agora_rank();
    if (!strcmp(how, "extra_barrier") && me == 1) agora_barrier();
    if (!strcmp(how, "alloc_one_rank") && me == 0) test_alloc(4096);
    if (!strcmp(how, "reduce_count") || !strcmp(how, "reduce_type")) {
        double v[2] = {1, 2};
        agora_type_t type = !strcmp(how, "reduce_type") && me == 1 ? AGORA_INT64 : AGORA_DOUBLE;
        size_t count = !strcmp(how, "reduce_count") && me == 1 ? 2 : 1;
        agora_reduce(v, count, type, AGORA_SUM);
    }
    if (!strcmp(how, "reduce_huge")) {
        double v = 1;
        int status = agora_reduce(&v, me == 1 ? (size_t)1 << 40 : 1, AGORA_DOUBLE, AGORA_SUM);
        CHECK(me != 1 || status == AGORA_ERR_INVALID_ARGUMENT, "huge reduce returned %d", status);
    }
    if (!strcmp(how, "deadlock")) {
        /* One lock per rank and a cycle over all of them: with fewer locks
         * than ranks two ranks race for the same first lock, and the report
         * depends on which one won. */
        int n = agora_nranks();
        agora_lock_t *locks = test_lock_array_create((size_t)n);
        agora_lock(&locks[me]);
        agora_barrier(); /* every rank holds its own lock */
        agora_lock(&locks[(me + 1) % n]);
    }
    if (!strcmp(how, "finalize_holding")) {
        agora_lock_t *lk = test_lock_create();
        if (me == 1) agora_lock(lk);
        agora_barrier();
        if (me == 0) agora_lock(lk);
        agora_finalize();
        return 0;
    }
    if (!strcmp(how, "stop") && me == 1) raise(SIGSTOP);
    if (!strcmp(how, "outside") && me == 1) sleep(argc > 2 ? atoi(argv[2]) : 3);
    if (!strcmp(how, "lock_count")) {
        if (me == 0) test_lock_create(); /* a lock only rank 0 makes */
        agora_lock_t *lk = test_lock_create();
        long *counter = test_alloc(sizeof(long));
        for (int i = 0; i < 5000; i++) {
            agora_lock(lk);
            long v = *counter;
            for (volatile int k = 0; k < 2000; k++) { /* widen the window a lost update needs */
            }
            *counter = v + 1;
            agora_unlock(lk);
        }
        agora_barrier();
        CHECK(*counter == 5000L * agora_nranks(), "counter %ld, expected %ld", *counter, 5000L * agora_nranks());
    }
    if (agora_rank() == 1 || agora_nranks() == 1) {
        if (!strcmp(how, "exit")) exit(3);
        if (!strcmp(how, "kill")) raise(SIGKILL);
        if (!strcmp(how, "abort")) abort();
    }
    if (agora_rank() == 0) {
        if (!strcmp(how, "segv")) {
            volatile uintptr_t address = 16;
            volatile int *wild = (volatile int *)address;
            *wild = 1;
        }
        if (!strcmp(how, "unallocated")) {
            /* Past every collective allocation, still inside the global range. */
            volatile int *beyond = (volatile int *)((uintptr_t)data + 64 * 4096);
            *beyond = 1;
        }
    }
    if (!strcmp(how, "alloc_differ")) test_alloc(agora_rank() == 0 ? (size_t)1 << 63 : 0);
    if (!strcmp(how, "cyclic_maps")) {
        long max_maps = 65530;
        FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
        if (f) {
            if (fscanf(f, "%ld", &max_maps) != 1) max_maps = 65530;
            fclose(f);
        }
        size_t pages = 2 * (size_t)max_maps * (size_t)agora_nranks();
        char *c = test_alloc_placed(pages * 4096, AGORA_PLACE_CYCLIC, 0);
        CHECK(c != NULL, "cyclic allocation of %zu pages failed: give more AGORA_MEMORY", pages);
        c[agora_rank() * 4096] = 1;
    }
    data[agora_rank()] = 1;
    agora_barrier(); /* the survivors wait here for the dead rank */
    agora_finalize();
    return 0;
}
