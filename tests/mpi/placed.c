/* agora_malloc_placed on real ranks, fork-join model (main on rank 0 only):
 * each placement's homes, page by page, as seen from every rank; data
 * written and read back by threads on every rank; free from another rank;
 * reuse after free (zero-filled, also under another placement); exhaustion;
 * bad arguments; placed allocations and frees from threads on every rank at
 * once.
 *
 * placed            all of the above
 * placed exhaust    fills the placed region (run with --memory 64M)      */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define PAGE 4096
#define WORDS_PER_PAGE (PAGE / sizeof(long))
enum { MAX_RANKS = 64, CONCURRENT_ROUNDS = 40 };

struct job {
    long *mem;
    long pages, placement, on_rank, np;
    long slot, nslots; /* this thread writes the pages with i % nslots == slot */
    long seed;
};

static int expected_home(long i, long pages, long placement, long on_rank, long np)
{
    if (placement == AGORA_PLACE_BLOCK) return (int)(i * np / pages);
    if (placement == AGORA_PLACE_CYCLIC) return (int)(i % np);
    return (int)on_rank;
}

static long value(long seed, long page, long word) { return seed * 1000003 + page * 4099 + word + 1; }

/* Every page's home as this rank sees it; returns the number of mismatches. */
static long check_homes(const struct job *j)
{
    long bad = 0;
    for (long i = 0; i < j->pages; i++) {
        int want = expected_home(i, j->pages, j->placement, j->on_rank, j->np);
        int got = agora_home_of((char *)j->mem + i * PAGE);
        if (got != want) {
            fprintf(stderr, "rank %d: page %ld of %ld (placement %ld): home %d, expected %d\n", agora_rank(), i,
                    j->pages, j->placement, got, want);
            bad++;
        }
    }
    return bad;
}

static void *writer(void *arg)
{
    struct job *j = arg;
    long bad = check_homes(j);
    for (long i = j->slot; i < j->pages; i += j->nslots)
        for (long w = 0; w < (long)WORDS_PER_PAGE; w++) {
            if (j->mem[i * WORDS_PER_PAGE + w] != 0) bad++; /* zero-filled */
            j->mem[i * WORDS_PER_PAGE + w] = value(j->seed, i, w);
        }
    return (void *)(intptr_t)bad;
}

static void *reader(void *arg)
{
    struct job *j = arg;
    long bad = check_homes(j);
    for (long i = 0; i < j->pages; i++)
        for (long w = 0; w < (long)WORDS_PER_PAGE; w += 7)
            if (j->mem[i * WORDS_PER_PAGE + w] != value(j->seed, i, w)) bad++;
    return (void *)(intptr_t)bad;
}

static void *zero_reader(void *arg)
{
    struct job *j = arg;
    long bad = check_homes(j);
    for (long i = 0; i < j->pages; i++)
        for (long w = 0; w < (long)WORDS_PER_PAGE; w++)
            if (j->mem[i * WORDS_PER_PAGE + w] != 0) bad++;
    return (void *)(intptr_t)bad;
}

static void *freer(void *arg)
{
    struct job *j = arg;
    return (void *)(intptr_t)agora_mem_free(j->mem);
}

/* Runs fn on one thread per rank (job k on rank k) and sums what they return. */
static long on_every_rank(void *(*fn)(void *), struct job *jobs, long np)
{
    agora_thread_t t[MAX_RANKS];
    for (long r = 0; r < np; r++)
        CHECK(agora_thread_create_on(&t[r], (int)r, fn, &jobs[r]) == AGORA_OK, "create on rank %ld", r);
    long sum = 0;
    for (long r = 0; r < np; r++) {
        void *ret;
        CHECK(agora_thread_join(t[r], &ret) == AGORA_OK, "join of rank %ld", r);
        sum += (long)(intptr_t)ret;
    }
    return sum;
}

/* jobs: np of them, in global memory. Allocates, writes from every rank,
 * reads back from every rank; returns the memory (still allocated). */
static long *exercise(struct job *jobs, long np, long pages, long placement, long on_rank, long seed)
{
    long *mem = test_malloc_placed((size_t)pages * PAGE, (agora_placement_t)placement, (int)on_rank);
    CHECK(mem != NULL, "test_malloc_placed(%ld pages, placement %ld)", pages, placement);
    CHECK((uintptr_t)mem % PAGE == 0, "not page-aligned: %p", (void *)mem);
    for (long r = 0; r < np; r++)
        jobs[r] = (struct job){mem, pages, placement, on_rank, np, r, np, seed};
    CHECK(check_homes(&jobs[0]) == 0, "homes seen by main");
    long bad = on_every_rank(writer, jobs, np);
    CHECK(bad == 0, "%ld bad homes or non-zero words before the writes (placement %ld)", bad, placement);
    for (long i = 0; i < pages; i++)
        for (long w = 0; w < (long)WORDS_PER_PAGE; w += 13)
            CHECK(mem[i * WORDS_PER_PAGE + w] == value(seed, i, w), "main reads page %ld word %ld", i, w);
    bad = on_every_rank(reader, jobs, np);
    CHECK(bad == 0, "%ld bad homes or words read back (placement %ld)", bad, placement);
    return mem;
}

/* Concurrent placed allocations: every thread allocates, checks, writes its
 * own pattern, and keeps two blocks live at a time so that overlapping runs
 * would overwrite each other's pattern. */
struct worker {
    long id, np, bad;
};

static void *concurrent(void *arg)
{
    struct worker *me = arg;
    long *live[2] = {NULL, NULL};
    long sizes[2] = {0, 0};
    for (long round = 0; round < CONCURRENT_ROUNDS; round++) {
        long k = round % 2;
        if (live[k]) {
            for (long w = 0; w < sizes[k] * (long)WORDS_PER_PAGE; w += 61)
                if (live[k][w] != me->id * 100000 + round - 2) me->bad++;
            if (agora_mem_free(live[k]) != AGORA_OK) me->bad++;
        }
        long pages = 1 + (me->id + round) % 5;
        long placement = (me->id + round) % 3;
        long on_rank = (me->id * 3 + round) % me->np;
        long *m = test_malloc_placed((size_t)pages * PAGE, (agora_placement_t)placement, (int)on_rank);
        if (!m) {
            me->bad++;
            break;
        }
        struct job j = {m, pages, placement, placement == AGORA_PLACE_RANK ? on_rank : 0, me->np, 0, 1, 0};
        me->bad += check_homes(&j);
        for (long w = 0; w < pages * (long)WORDS_PER_PAGE; w++) {
            if (m[w] != 0) me->bad++;
            m[w] = me->id * 100000 + round;
        }
        live[k] = m;
        sizes[k] = pages;
    }
    for (long k = 0; k < 2; k++)
        if (live[k] && agora_mem_free(live[k]) != AGORA_OK) me->bad++;
    return NULL;
}

static void exhaust(void)
{
    /* The placed region is a quarter of AGORA_MEMORY: fill it with 1 MiB
     * blocks, check the failure, free them all, and fill it again. */
    enum { MAX_BLOCKS = 1 << 12 };
    static void *blocks[MAX_BLOCKS];
    long n = 0;
    while (n < MAX_BLOCKS && (blocks[n] = test_malloc_placed(1 << 20, AGORA_PLACE_CYCLIC, 0)) != NULL)
        n++;
    CHECK(n > 0 && n < MAX_BLOCKS, "%ld blocks of 1 MiB before exhaustion", n);
    for (long i = 0; i < n; i++)
        CHECK(agora_mem_free(blocks[i]) == AGORA_OK, "free of block %ld", i);
    long again = 0;
    while (again < MAX_BLOCKS && (blocks[again] = test_malloc_placed(1 << 20, AGORA_PLACE_BLOCK, 0)) != NULL)
        again++;
    CHECK(again == n, "%ld blocks after freeing all, %ld before", again, n);
    for (long i = 0; i < again; i++)
        CHECK(agora_mem_free(blocks[i]) == AGORA_OK, "free of block %ld", i);
    CHECK(test_malloc_placed(SIZE_MAX, AGORA_PLACE_RANK, 0) == NULL, "SIZE_MAX bytes allocated");
    printf("placed region held %ld blocks of 1 MiB\n", n);
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    if (agora_rank() == 0) {
        long np = agora_nranks();
        CHECK(np <= MAX_RANKS, "at most %d ranks", MAX_RANKS);
        if (argc > 1 && strcmp(argv[1], "exhaust") == 0) {
            exhaust();
            agora_finalize();
            return 0;
        }
        struct job *jobs = test_malloc((size_t)np * sizeof *jobs);
        CHECK(jobs != NULL, "agora_malloc of the jobs");

        /* Each placement, with an odd page count so block is uneven. */
        long pages = 3 * np + 2;
        long *blk = exercise(jobs, np, pages, AGORA_PLACE_BLOCK, 0, 1);
        long *cyc = exercise(jobs, np, pages, AGORA_PLACE_CYCLIC, 0, 2);
        long *last = exercise(jobs, np, 3, AGORA_PLACE_RANK, np - 1, 3);
        long *first = exercise(jobs, np, 1, AGORA_PLACE_RANK, 0, 4);
        long *tiny = test_malloc_placed(1, AGORA_PLACE_BLOCK, 0);
        CHECK(tiny != NULL && agora_home_of(tiny) == 0, "a one-byte block allocation");

        /* Bad arguments. */
        CHECK(test_malloc_placed(PAGE, (agora_placement_t)7, 0) == NULL, "placement 7 accepted");
        CHECK(test_malloc_placed(PAGE, AGORA_PLACE_RANK, (int)np) == NULL, "rank %ld accepted", np);
        CHECK(test_malloc_placed(PAGE, AGORA_PLACE_RANK, -1) == NULL, "rank -1 accepted");
        CHECK(agora_mem_free((char *)blk + 8) == AGORA_ERR_BAD_POINTER, "free inside a placed block");
        CHECK(agora_mem_free((char *)blk + PAGE) == AGORA_ERR_BAD_POINTER, "free of a placed block's second page");
        /* Sizes up to SIZE_MAX: NULL, never a wrapped small block. */
        size_t huge[] = {SIZE_MAX, SIZE_MAX - PAGE + 2, (size_t)1 << 63, (size_t)1 << 44};
        for (int k = 0; k < 4; k++)
            for (long placement = 0; placement < 3; placement++)
                CHECK(test_malloc_placed(huge[k], (agora_placement_t)placement, 0) == NULL,
                      "test_malloc_placed(%zu, %ld) succeeded", huge[k], placement);

        /* Free from another rank, then the same pages come back zero-filled
         * (first fit): under the same placement, and under another one
         * (homes move: block's pages now cycle over the ranks). */
        agora_thread_t t;
        void *ret;
        jobs[0].mem = blk;
        CHECK(agora_thread_create_on(&t, (int)(np - 1), freer, &jobs[0]) == AGORA_OK, "create freer");
        CHECK(agora_thread_join(t, &ret) == AGORA_OK && (long)(intptr_t)ret == AGORA_OK,
              "agora_free of the block allocation from rank %ld returned %ld", np - 1, (long)(intptr_t)ret);
        CHECK(agora_home_of(blk) == -1, "a freed page still has home %d", agora_home_of(blk));
        CHECK(agora_mem_free(blk) == AGORA_ERR_BAD_POINTER, "double free not detected");
        long *again = test_malloc_placed((size_t)pages * PAGE, AGORA_PLACE_BLOCK, 0);
        CHECK(again == blk, "freed pages not reused: %p, freed %p", (void *)again, (void *)blk);
        for (long r = 0; r < np; r++)
            jobs[r] = (struct job){again, pages, AGORA_PLACE_BLOCK, 0, np, r, np, 5};
        long bad = on_every_rank(zero_reader, jobs, np);
        CHECK(bad == 0, "%ld non-zero words or bad homes in reused memory", bad);
        CHECK(agora_mem_free(again) == AGORA_OK, "free of the reused block");
        long *moved = exercise(jobs, np, pages, AGORA_PLACE_CYCLIC, 0, 6);
        CHECK(moved == blk, "freed pages not reused under another placement: %p, freed %p", (void *)moved, (void *)blk);
        for (long r = 0; r < np; r++)
            jobs[r].mem = moved;
        CHECK(agora_mem_free(moved) == AGORA_OK, "free of the moved block");
        long *third = exercise(jobs, np, pages, AGORA_PLACE_RANK, np - 1, 7);
        CHECK(third == blk, "freed pages not reused a third time");
        CHECK(agora_mem_free(third) == AGORA_OK && agora_mem_free(cyc) == AGORA_OK &&
                  agora_mem_free(last) == AGORA_OK && agora_mem_free(first) == AGORA_OK &&
                  agora_mem_free(tiny) == AGORA_OK,
              "frees of the rest");

        /* Threads on every rank allocate and free at once. */
        long nworkers = 2 * np;
        struct worker *workers = test_malloc((size_t)nworkers * sizeof *workers);
        agora_thread_t wt[2 * MAX_RANKS];
        for (long i = 0; i < nworkers; i++) {
            workers[i] = (struct worker){i, np, 0};
            CHECK(agora_thread_create_on(&wt[i], (int)(i % np), concurrent, &workers[i]) == AGORA_OK,
                  "create worker %ld", i);
        }
        for (long i = 0; i < nworkers; i++) {
            CHECK(agora_thread_join(wt[i], NULL) == AGORA_OK, "join worker %ld", i);
            CHECK(workers[i].bad == 0, "worker %ld on rank %ld: %ld bad checks", i, i % np, workers[i].bad);
        }
        /* Everything was freed: the whole region is one free run again. */
        long *all = test_malloc_placed((size_t)pages * PAGE, AGORA_PLACE_BLOCK, 0);
        CHECK(all == blk, "placed region not whole after the concurrent rounds: %p, expected %p", (void *)all,
              (void *)blk);
        CHECK(agora_mem_free(all) == AGORA_OK, "last free");
        agora_mem_free(workers);
        agora_mem_free(jobs);
    }
    PASS("placed");
    agora_finalize();
    return 0;
}
