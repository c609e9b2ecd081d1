/* Fork-join threads: main runs on rank 0 only and places workers on every
 * rank. Workers check they run where the placement rule says, increment a
 * lock-protected counter, write interleaved words of shared pages (false
 * sharing), create and join nested threads (which use agora_malloc memory of
 * their creator and free it), and return a value main checks. Then the
 * errors: bad rank, joining twice, a handle of no thread, a pointer that is
 * not code.
 *
 * forkjoin [workers]   (default: N*T, every slot; one more thread created
 *                      after the joins shows the placement wrap round)
 * forkjoin crash       a worker on the last rank aborts while main joins   */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define PAGE 4096
enum { MAX_WORKERS = 64, PAGES = 2, WORDS = PAGES * PAGE / sizeof(long), ROUNDS = 100, ITERS = 500 };

/* Everything a thread needs, in global memory: C globals are per rank. */
struct ctx {
    long *words;  /* PAGES shared pages, word j written by worker j % nworkers */
    long counter; /* under lock */
    agora_lock_t lock;
    long nworkers, threads_per_rank;
    long where[MAX_WORKERS]; /* rank each worker ran on */
    long nested_done;        /* under lock */
};

struct task {
    struct ctx *c;
    long i;
    long *scratch; /* nested threads: agora_malloc'd by the parent, freed by the child */
};

static int not_code = 42; /* used as a function pointer: must be refused */

static void *nested(void *arg)
{
    struct task *t = arg;
    for (long k = 0; k < 64; k++)
        CHECK(t->scratch[k] == t->i * 100 + k, "nested %ld: scratch[%ld] = %ld", t->i, k, t->scratch[k]);
    CHECK(agora_mem_free(t->scratch) == AGORA_OK, "nested %ld: agora_free of its parent's block", t->i);
    agora_lock(&t->c->lock);
    t->c->counter += 1;
    t->c->nested_done += 1;
    agora_unlock(&t->c->lock);
    return (void *)(intptr_t)(t->i * 7 + agora_rank());
}

/* Creates a nested thread (explicit rank, or the placement rule if rank < 0)
 * and joins it. */
static void run_nested(struct ctx *c, long i, int rank)
{
    struct task *t = test_malloc(sizeof *t);
    CHECK(t, "worker %ld: agora_malloc", i);
    t->c = c;
    t->i = i;
    t->scratch = test_malloc(64 * sizeof(long));
    CHECK(t->scratch, "worker %ld: agora_malloc", i);
    for (long k = 0; k < 64; k++)
        t->scratch[k] = i * 100 + k;
    agora_thread_t th;
    int rc = rank < 0 ? agora_thread_create(&th, nested, t) : agora_thread_create_on(&th, rank, nested, t);
    CHECK(rc == AGORA_OK, "worker %ld: nested create returned %d", i, rc);
    CHECK(rank < 0 || th.rank == rank, "worker %ld: nested thread placed on %d, asked %d", i, th.rank, rank);
    void *ret = NULL;
    CHECK(agora_thread_join(th, &ret) == AGORA_OK, "worker %ld: nested join", i);
    CHECK((intptr_t)ret == i * 7 + th.rank, "worker %ld: nested returned %ld", i, (long)(intptr_t)ret);
    agora_mem_free(t);
}

static void *worker(void *arg)
{
    struct task *t = arg;
    struct ctx *c = t->c;
    long i = t->i, n = c->nworkers;
    c->where[i] = agora_rank();
    for (long r = 1; r <= ROUNDS; r++) {
        for (long j = i; j < (long)WORDS; j += n)
            c->words[j] = r * 100000 + j;
        for (long k = 0; k < ITERS / ROUNDS; k++) {
            agora_lock(&c->lock);
            c->counter += 1;
            agora_unlock(&c->lock);
        }
    }
    /* Nested threads: one on the next rank, one by the placement rule
     * (except on rank 0, where it would shift main's placements). */
    if (i % 3 == 0) run_nested(c, i, (agora_rank() + 1) % agora_nranks());
    if (i % 3 == 1) run_nested(c, i, agora_rank() == 0 ? agora_nranks() - 1 : -1);
    return (void *)(intptr_t)(i * 1000 + 17);
}

static void *crasher(void *arg)
{
    (void)arg;
    fprintf(stderr, "crasher: aborting on rank %d\n", agora_rank());
    abort();
}

static void *idle_worker(void *arg) { return arg; }

/* Returns a zeroed page homed on the rank it runs on. */
static void *alloc_here(void *arg)
{
    (void)arg;
    long *p = test_malloc(PAGE);
    CHECK(p, "agora_malloc on rank %d", agora_rank());
    memset(p, 0, PAGE);
    return p;
}

struct phase2 {
    struct ctx *c;
    long *remote;
    long r;
};

static void *phase2_worker(void *arg)
{
    struct phase2 *t = arg;
    /* This rank has an old copy of ctx from the first phase: the create
     * must make main's later write visible. */
    CHECK(t->c->nworkers == -2, "rank %d: ctx->nworkers %ld after main set -2", agora_rank(), t->c->nworkers);
    t->remote[t->r * 8] = 1000 + t->r;
    return NULL;
}

/* Create and join carry consistency where a rank holds an old copy: ctx is
 * cached on every rank by the first phase; `remote` is homed on the last rank
 * and cached here before the threads write it. */
static void check_consistency(struct ctx *c)
{
    int n = agora_nranks();
    agora_thread_t t;
    void *ret = NULL;
    CHECK(agora_thread_create_on(&t, n - 1, alloc_here, NULL) == AGORA_OK, "create alloc_here");
    CHECK(agora_thread_join(t, &ret) == AGORA_OK && ret, "join alloc_here");
    long *remote = ret;
    /* With memory servers (the ranks after n-1) a server homes it. */
    const char *servers = getenv("AGORA_MEMORY_SERVERS");
    if (servers && atoi(servers) > 0)
        CHECK(agora_home_of(remote) >= n, "remote page homed on %d, not on a server", agora_home_of(remote));
    else
        CHECK(agora_home_of(remote) == n - 1, "remote page homed on %d", agora_home_of(remote));
    for (int r = 0; r < n; r++)
        CHECK(remote[r * 8] == 0, "remote[%d] = %ld before", r * 8, remote[r * 8]);
    c->nworkers = -2;
    struct phase2 *tasks = test_malloc(n * sizeof *tasks);
    agora_thread_t th[16];
    for (int r = 0; r < n && r < 16; r++) {
        tasks[r] = (struct phase2){c, remote, r};
        CHECK(agora_thread_create_on(&th[r], r, phase2_worker, &tasks[r]) == AGORA_OK, "create phase 2 on %d", r);
    }
    for (int r = 0; r < n && r < 16; r++)
        CHECK(agora_thread_join(th[r], NULL) == AGORA_OK, "join phase 2 on %d", r);
    for (int r = 0; r < n && r < 16; r++)
        CHECK(remote[r * 8] == 1000 + r, "remote[%d] = %ld after the join", r * 8, remote[r * 8]);
    agora_mem_free(tasks);
    agora_mem_free(remote);
}

static void check_errors(void)
{
    int n = agora_nranks();
    agora_thread_t t;
    CHECK(agora_thread_create_on(&t, n, idle_worker, NULL) == AGORA_ERR_INVALID_ARGUMENT, "create_on rank N");
    CHECK(agora_thread_create_on(&t, -1, idle_worker, NULL) == AGORA_ERR_INVALID_ARGUMENT, "create_on rank -1");
    CHECK(agora_thread_join(t, NULL) == AGORA_ERR_INVALID_ARGUMENT, "join of a failed create's handle");
    CHECK(agora_thread_create(&t, NULL, NULL) == AGORA_ERR_INVALID_ARGUMENT, "create of NULL");
    CHECK(agora_thread_create(&t, (void *(*)(void *))(void *)&not_code, NULL) == AGORA_ERR_INVALID_ARGUMENT,
          "create of a data pointer");

    /* Joining twice, on this rank and on another. */
    int ranks[2] = {0, n - 1};
    for (int k = 0; k < (n > 1 ? 2 : 1); k++) {
        int r = ranks[k];
        CHECK(agora_thread_create_on(&t, r, idle_worker, (void *)(intptr_t)(r + 5)) == AGORA_OK, "create_on %d", r);
        void *ret = NULL;
        CHECK(agora_thread_join(t, &ret) == AGORA_OK && (intptr_t)ret == r + 5, "join on %d", r);
        double t0 = agora_wtime();
        CHECK(agora_thread_join(t, &ret) == AGORA_ERR_INVALID_ARGUMENT, "second join on rank %d", r);
        CHECK(agora_wtime() - t0 < 5, "second join took %.1f s", agora_wtime() - t0);
        agora_thread_t bogus = {r, 0, t.id + 1000};
        CHECK(agora_thread_join(bogus, &ret) == AGORA_ERR_INVALID_ARGUMENT, "join of an unknown id on %d", r);
    }
}

/* Outside program mode the C API refuses what can never run: more live
 * threads than slots, a barrier count above them (docs/sync.md). */
static void *block_until_released(void *release)
{
    CHECK(agora_sem_wait(release) == AGORA_OK, "sem_wait");
    return NULL;
}
static void check_slot_limits(void)
{
    CHECK(!agora_program_mode(), "limits: built as an SPMD program");
    int slots = agora_thread_slots();
    CHECK(slots <= MAX_WORKERS, "slots %d", slots);
    agora_sem_t *limits_release = test_malloc(sizeof *limits_release);
    agora_thread_barrier_t *counted = test_malloc(sizeof *counted);
    CHECK(limits_release && counted, "agora_malloc");
    memset(counted, 0, sizeof *counted);
    CHECK(agora_sem_init(limits_release, 0) == AGORA_OK, "sem_init");
    CHECK(agora_thread_barrier_wait_count(counted, (unsigned)slots + 1) == AGORA_ERR_INVALID_ARGUMENT,
          "a count above the slots");
    agora_thread_reduction_t *team = test_malloc(sizeof *team);
    CHECK(team, "agora_malloc");
    memset(team, 0, sizeof *team);
    CHECK(agora_thread_reduction_init(team, (unsigned)slots + 1) == AGORA_ERR_INVALID_ARGUMENT,
          "a reduction count above the slots");
    agora_thread_t th[MAX_WORKERS + 1];
    for (int i = 0; i < slots; i++)
        CHECK(agora_thread_create(&th[i], block_until_released, limits_release) == AGORA_OK, "create %d", i);
    CHECK(agora_thread_create(&th[slots], block_until_released, limits_release) == AGORA_ERR_MISUSE,
          "create beyond the slots");
    for (int i = 0; i < slots; i++)
        CHECK(agora_sem_post(limits_release) == AGORA_OK, "post");
    for (int i = 0; i < slots; i++)
        CHECK(agora_thread_join(th[i], NULL) == AGORA_OK, "join");
    /* joined threads free their slots */
    CHECK(agora_thread_create(&th[0], block_until_released, limits_release) == AGORA_OK, "create after joins");
    CHECK(agora_sem_post(limits_release) == AGORA_OK && agora_thread_join(th[0], NULL) == AGORA_OK, "last");
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    int n = agora_nranks();
    if (agora_rank() == 0) {
        if (argc > 1 && strcmp(argv[1], "limits") == 0) {
            check_slot_limits();
            printf("PASS forkjoin limits on %d ranks\n", n);
            agora_finalize();
            return 0;
        }
        if (argc > 1 && strcmp(argv[1], "crash") == 0) {
            agora_thread_t t;
            CHECK(agora_thread_create_on(&t, n - 1, crasher, NULL) == AGORA_OK, "create crasher");
            agora_thread_join(t, NULL);
            CHECK(0, "the job should have ended when rank %d aborted", n - 1);
        }
        const char *tpr = getenv("AGORA_THREADS_PER_RANK");
        long T = tpr ? atol(tpr) : 1;
        long P = argc > 1 ? atol(argv[1]) : n * T;
        CHECK(P >= 1 && P <= MAX_WORKERS, "workers %ld not in 1..%d", P, MAX_WORKERS);
        double t0 = agora_wtime();

        struct ctx *c = test_malloc(sizeof *c);
        CHECK(c, "agora_malloc ctx");
        memset(c, 0, sizeof *c);
        c->words = test_malloc(PAGES * PAGE);
        CHECK(c->words, "agora_malloc words");
        memset(c->words, 0, PAGES * PAGE);
        agora_lock_t *lk = test_lock_create();
        c->lock = *lk;
        c->nworkers = P;
        c->threads_per_rank = T;

        agora_thread_t th[MAX_WORKERS];
        long first_slot = agora_program_mode() ? 1 : 0;
        struct task *tasks = test_malloc(P * sizeof *tasks);
        CHECK(tasks, "agora_malloc tasks");
        for (long i = 0; i < P; i++) {
            tasks[i].c = c;
            tasks[i].i = i;
            tasks[i].scratch = NULL;
            CHECK(agora_thread_create(&th[i], worker, &tasks[i]) == AGORA_OK, "create worker %ld", i);
            /* Built in program mode, main holds rank 0's first slot. */
            int expect = (int)(((i + first_slot) / T) % n);
            CHECK(th[i].rank == expect, "worker %ld placed on %d, rule says %d", i, th[i].rank, expect);
        }
        long nested_expected = 0;
        for (long i = 0; i < P; i++) {
            void *ret = NULL;
            CHECK(agora_thread_join(th[i], &ret) == AGORA_OK, "join worker %ld", i);
            CHECK((intptr_t)ret == i * 1000 + 17, "worker %ld returned %ld", i, (long)(intptr_t)ret);
            CHECK(c->where[i] == th[i].rank, "worker %ld ran on %ld, handle says %d", i, c->where[i], th[i].rank);
            nested_expected += (i % 3 != 2);
        }
        /* The joined workers' slots are free again; the next thread placed
         * by the rule continues the round (and wraps to rank 0 after N*T). */
        agora_thread_t extra;
        void *extra_ret = NULL;
        CHECK(agora_thread_create(&extra, idle_worker, (void *)(intptr_t)3) == AGORA_OK, "create after the joins");
        CHECK(extra.rank == (int)(((P + first_slot) / T) % n), "thread %ld placed on %d, rule says %ld", P, extra.rank,
              ((P + first_slot) / T) % n);
        CHECK(agora_thread_join(extra, &extra_ret) == AGORA_OK && (intptr_t)extra_ret == 3, "join the extra thread");
        /* Joins are acquires: every worker's writes are visible without a lock.
         * Under regc a span's stores travel with its lock only (Samhita/RegC,
         * rule 2): without memory servers main's rank homes ctx and sees them
         * at the home; with servers it takes the lock to see them. */
        const char *proto = getenv("AGORA_PROTOCOL"), *srv = getenv("AGORA_MEMORY_SERVERS");
        if (proto && !strncmp(proto, "regc", 4) && srv && atoi(srv) > 0) {
            agora_lock(&c->lock);
            agora_unlock(&c->lock);
        }
        CHECK(c->counter == P * ITERS + nested_expected, "counter %ld, expected %ld", c->counter,
              P * ITERS + nested_expected);
        CHECK(c->nested_done == nested_expected, "nested %ld of %ld", c->nested_done, nested_expected);
        for (long j = 0; j < (long)WORDS; j++)
            CHECK(c->words[j] == ROUNDS * 100000 + j, "word %ld holds %ld", j, c->words[j]);
        check_consistency(c);
        check_errors();
        printf("PASS forkjoin: %ld workers, %ld per rank, %d ranks, protocol %s, %.2f s\n", P, T, n,
               agora_protocol_name(), agora_wtime() - t0);
    }
    agora_finalize();
    return 0;
}
