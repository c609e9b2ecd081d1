/* Reductions among fork-join threads on any ranks (agora_thread_reduce):
 * main on rank 0 places N threads with the placement rule; every round
 * they reduce sum, min and max over int64 and double, through a static
 * zero-filled global object and a malloc'd one (this program is built in
 * program mode: its globals and malloc'd memory are global memory). Every
 * participant checks its result bits against a fold in the order of the
 * participants' agora_thread_self() ids (double values that cancel, so any
 * other order gives other bits), and the results of all are compared.
 *
 * threadreduce rounds N ROUNDS | nofault N ROUNDS | mismatch N | toobig N | never_met N
 * (never_met: a team of N + 1 of which N come; the hang watch must say so) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { MAX_THREADS = 64, MAX_N = 8 };

static agora_thread_reduction_t team;       /* .bss: zero-filled, initialised by main */
static agora_thread_reduction_t *heap_team; /* malloc'd */
static agora_thread_barrier_t barrier;
static long nthreads, rounds;
static uint64_t ids[MAX_THREADS];
static unsigned char results[MAX_THREADS][MAX_N * 8];

static const double kCancel[] = {1e16, -1e16, 1.0, 0.5, 3.0, -7.25, 1e-8, 2.5e15};

/* Thread i's element k of round r, as bits (int64 or double). */
static uint64_t value(long i, long r, long k, int is_double)
{
    uint64_t x = (uint64_t)(i * 7919 + r * 104729 + k * 31 + 1) * 0x9e3779b97f4a7c15ull;
    if (!is_double) return x ^ (x >> 29);
    double d = kCancel[(x >> 32) % (sizeof kCancel / sizeof *kCancel)];
    uint64_t bits;
    memcpy(&bits, &d, 8);
    return bits;
}

/* The fold a correct manager does: thread indices sorted by id. */
static void expected(long r, long n, agora_type_t type, agora_op_t op, unsigned char *out)
{
    long order[MAX_THREADS];
    for (long i = 0; i < nthreads; i++)
        order[i] = i;
    for (long i = 1; i < nthreads; i++)
        for (long j = i; j > 0 && ids[order[j]] < ids[order[j - 1]]; j--) {
            long t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (long k = 0; k < n; k++) {
        if (type == AGORA_INT64) {
            int64_t acc = 0;
            for (long j = 0; j < nthreads; j++) {
                int64_t v = (int64_t)value(order[j], r, k, 0);
                acc = j == 0            ? v
                      : op == AGORA_SUM ? (int64_t)((uint64_t)acc + (uint64_t)v)
                      : op == AGORA_MIN ? (v < acc ? v : acc)
                                        : (v > acc ? v : acc);
            }
            memcpy(out + k * 8, &acc, 8);
        } else {
            double acc = 0;
            for (long j = 0; j < nthreads; j++) {
                uint64_t bits = value(order[j], r, k, 1);
                double v;
                memcpy(&v, &bits, 8);
                acc = j == 0            ? v
                      : op == AGORA_SUM ? acc + v
                      : op == AGORA_MIN ? (v < acc ? v : acc)
                                        : (v > acc ? v : acc);
            }
            memcpy(out + k * 8, &acc, 8);
        }
    }
}

static void round_shape(long r, long *n, agora_type_t *type, agora_op_t *op)
{
    *n = 1 + r % MAX_N;
    *type = r % 2 ? AGORA_DOUBLE : AGORA_INT64;
    *op = (agora_op_t)((r / 2) % 3);
}

static long count_of(const char *json, const char *key)
{
    const char *p = strstr(json, key);
    CHECK(p, "no %s in the statistics", key);
    return atol(p + strlen(key) + 3); /* "key": N */
}

static void *worker(void *p)
{
    long i = (long)(intptr_t)p;
    ids[i] = agora_thread_self();
    CHECK(agora_thread_barrier_wait(&barrier) >= 0, "barrier");
    for (long r = 0; r < rounds; r++) {
        long n;
        agora_type_t type;
        agora_op_t op;
        round_shape(r, &n, &type, &op);
        unsigned char buf[MAX_N * 8], want[MAX_N * 8];
        for (long k = 0; k < n; k++) {
            uint64_t v = value(i, r, k, type == AGORA_DOUBLE);
            memcpy(buf + k * 8, &v, 8);
        }
        expected(r, n, type, op, want);
        agora_thread_reduction_t *obj = r % 3 == 2 ? heap_team : &team;
        int s = agora_thread_reduce(obj, buf, (size_t)n, type, op);
        CHECK(s == AGORA_OK, "round %ld: agora_thread_reduce returned %d", r, s);
        CHECK(memcmp(buf, want, (size_t)n * 8) == 0,
              "round %ld (thread %ld, n %ld, type %d, op %d): "
              "result differs from the fold in thread-id order",
              r, i, n, (int)type, (int)op);
        memcpy(results[i], buf, (size_t)n * 8);
        /* The barrier publishes results[]; every thread compares all. */
        CHECK(agora_thread_barrier_wait(&barrier) >= 0, "barrier");
        for (long j = 0; j < nthreads; j++)
            CHECK(memcmp(results[j], results[i], (size_t)n * 8) == 0, "round %ld: threads %ld and %ld differ", r, i, j);
        CHECK(agora_thread_barrier_wait(&barrier) >= 0, "barrier");
    }
    return NULL;
}

/* Reductions alone: no page fault and no lock on any rank while they run.
 * Buffers live on the thread's stack (homed on its rank); the expected
 * results are computed before the measured stretch; the object is the
 * malloc'd one, whose page no worker has touched (a reduce that read it
 * would fault on the other ranks). */
static void *nofault_worker(void *p)
{
    long i = (long)(intptr_t)p;
    ids[i] = agora_thread_self();
    CHECK(agora_thread_barrier_wait(&barrier) >= 0, "barrier");
    double sum_want = 0;
    unsigned char want[8];
    expected(1, 1, AGORA_DOUBLE, AGORA_SUM, want);
    memcpy(&sum_want, want, 8);
    uint64_t mine = value(i, 1, 0, 1);
    double mine_d;
    memcpy(&mine_d, &mine, 8);
    CHECK(agora_thread_barrier_wait(&barrier) >= 0, "barrier");
    char local[2][4096];
    agora_stats_json(local[0], sizeof local[0]);
    for (long r = 0; r < rounds; r++) {
        double v = mine_d;
        CHECK(agora_thread_reduce(heap_team, &v, 1, AGORA_DOUBLE, AGORA_SUM) == AGORA_OK, "reduce");
        CHECK(memcmp(&v, &sum_want, 8) == 0, "round %ld: %g, not %g", r, v, sum_want);
    }
    agora_stats_json(local[1], sizeof local[1]);
    CHECK(agora_thread_barrier_wait(&barrier) >= 0, "barrier");
    /* Every thread of a rank measured a stretch in which its rank's threads
     * only reduced: the counts of any of them must not move. */
    long faults = count_of(local[1], "read_faults") + count_of(local[1], "write_faults") -
                  count_of(local[0], "read_faults") - count_of(local[0], "write_faults");
    long locks = count_of(local[1], "lock_acquires") - count_of(local[0], "lock_acquires");
    CHECK(faults == 0 && locks == 0, "thread %ld: %ld page faults and %ld lock acquires during %ld reductions", i,
          faults, locks, rounds);
    return NULL;
}

static void *mismatch_worker(void *p)
{
    long i = (long)(intptr_t)p;
    double buf[4] = {1, 2, 3, 4};
    /* Thread 0 passes 3 elements, the others 4: every participant is told. */
    int s = agora_thread_reduce(&team, buf, i == 0 ? 3 : 4, AGORA_DOUBLE, AGORA_SUM);
    CHECK(s == AGORA_ERR_MISUSE, "thread %ld: a mismatched round returned %d, not AGORA_ERR_MISUSE", i, s);
    CHECK(buf[0] == 1 && buf[3] == 4, "a failed round changed the buffer");
    /* The object works again for the next round. */
    int64_t one = 1;
    s = agora_thread_reduce(&team, &one, 1, AGORA_INT64, AGORA_SUM);
    CHECK(s == AGORA_OK && one == nthreads, "thread %ld: after a mismatch: status %d, sum %lld", i, s, (long long)one);
    return NULL;
}

static void *toobig_worker(void *p)
{
    long i = (long)(intptr_t)p;
    int64_t one = 1;
    /* Thread 0 passes more elements than allowed: the round fails for all. */
    size_t n = i == 0 ? (size_t)AGORA_THREAD_REDUCE_MAX + 1 : 1;
    int s = agora_thread_reduce(&team, &one, n, AGORA_INT64, AGORA_SUM);
    CHECK(s == AGORA_ERR_INVALID_ARGUMENT, "thread %ld: a round with too many elements returned %d", i, s);
    s = agora_thread_reduce(&team, &one, 1, AGORA_INT64, AGORA_SUM);
    CHECK(s == AGORA_OK && one == nthreads, "thread %ld: after a failed round: status %d, sum %lld", i, s,
          (long long)one);
    return NULL;
}

static void *never_met_worker(void *p)
{
    (void)p;
    double v = 1;
    agora_thread_reduce(&team, &v, 1, AGORA_DOUBLE, AGORA_SUM);
    return NULL;
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    CHECK(agora_program_mode() && agora_is_global(&team), "not in program mode");
    const char *mode = argc > 1 ? argv[1] : "rounds";
    nthreads = argc > 2 ? atol(argv[2]) : 2;
    rounds = argc > 3 ? atol(argv[3]) : 20;
    CHECK(nthreads >= 1 && nthreads <= MAX_THREADS, "threads %ld", nthreads);
    void *(*fn)(void *) = !strcmp(mode, "rounds")      ? worker
                          : !strcmp(mode, "nofault")   ? nofault_worker
                          : !strcmp(mode, "mismatch")  ? mismatch_worker
                          : !strcmp(mode, "toobig")    ? toobig_worker
                          : !strcmp(mode, "never_met") ? never_met_worker
                                                       : NULL;
    CHECK(fn, "unknown mode %s", mode);
    CHECK(team.count == 0 && team.magic == 0, "the static object is not zero-filled");
    /* Before init: not initialised, at once (not a hang). */
    int64_t x = 1;
    CHECK(agora_thread_reduce(&team, &x, 1, AGORA_INT64, AGORA_SUM) == AGORA_ERR_INVALID_ARGUMENT, "uninitialised");
    unsigned team_size = (unsigned)nthreads + !strcmp(mode, "never_met");
    CHECK(agora_thread_reduction_init(&team, team_size) == AGORA_OK, "init");
    CHECK(team.count == team_size, "count %u", team.count);
    heap_team = malloc(sizeof *heap_team);
    CHECK(heap_team && agora_is_global(heap_team), "malloc");
    CHECK(agora_thread_reduction_init(heap_team, (unsigned)nthreads) == AGORA_OK, "init");
    CHECK(agora_thread_reduction_init(heap_team, 0) == AGORA_ERR_INVALID_ARGUMENT, "count 0");
    /* Built in program mode, where threads may outnumber the slots (the C
     * API's limit outside program mode: forkjoin.c's `limits`). */
    CHECK(agora_program_mode(), "threadreduce is built in program mode");
    CHECK(agora_thread_reduction_init(heap_team, (unsigned)agora_thread_slots() + 1) == AGORA_OK,
          "a count above the thread slots");
    CHECK(agora_thread_reduction_init(heap_team, (unsigned)nthreads) == AGORA_OK, "init again");
    CHECK(agora_thread_barrier_init(&barrier, (unsigned)nthreads) == AGORA_OK, "barrier init");

    agora_thread_t t[MAX_THREADS];
    for (long i = 0; i < nthreads; i++)
        CHECK(agora_thread_create(&t[i], fn, (void *)(intptr_t)i) == AGORA_OK, "create %ld", i);
    for (long i = 0; i < nthreads; i++)
        CHECK(agora_thread_join(t[i], NULL) == AGORA_OK, "join %ld", i);

    CHECK(agora_thread_reduction_destroy(heap_team) == AGORA_OK, "destroy");
    CHECK(agora_thread_reduction_destroy(&team) == AGORA_OK, "destroy");
    CHECK(agora_thread_reduce(&team, &x, 1, AGORA_INT64, AGORA_SUM) == AGORA_ERR_INVALID_ARGUMENT, "destroyed");
    free(heap_team);
    printf("PASS threadreduce %s (%ld threads, %ld rounds, protocol %s) on %d ranks\n", mode, nthreads, rounds,
           agora_protocol_name(), agora_nranks());
    agora_finalize();
    return 0;
}
