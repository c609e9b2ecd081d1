/* agora_flush on real ranks (docs/flush.md), under every protocol and both
 * flush models (AGORA_FLUSH), 2-4 ranks:
 *  - misuse: a zero size, a wrapping size, memory that is not global or not
 *    allocated: AGORA_ERR_INVALID_ARGUMENT, nothing waits;
 *  - Wong & Rendell's busy-wait (figure 6): rank 0 produces `data` (a page of
 *    values) and `flag`, homed on different ranks, the last rank consumes,
 *    acknowledging each round; every other rank also spins on flag and
 *    checks data; rounds both ways (the producer's pages homed elsewhere,
 *    then on the consumer);
 *  - a pipelined LU-style neighbour sync: rank r waits for rank r-1's step
 *    counter, reads its value, writes its own, with counters and values on
 *    pages of different homes and single-slot back-pressure;
 *  - agora_flush_all: each rank publishes a slot and a ready word and reads
 *    everyone else's;
 *  - the synthetic benchmark's counts (Wong & Rendell table IV) on two of the
 *    ranks: with the observer model a remote copy is refreshed once and
 *    then moves nothing (CASE-3); a home's changes send one notice.
 * Every wait is bounded: a spin that lasts longer than the bound fails.
 * Usage: test_flush ROUNDS STEPS
 *        test_flush huge GIB: rank 0 agora_mem_mallocs GIB GiB, rank 1
 *        writes one word of it and flushes the whole region, then a flag;
 *        rank 0 sees the word and flushes the whole region too. Each flush
 *        must cost the page touched (under 1 s, under 64 MiB more resident
 *        memory), not the 256 Ki pages of each GiB. Run with AGORA_MEMORY
 *        more than 4 x GIB on 2 ranks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"

#define PAGE 4096
static double g_deadline;

static void spin_check(const char *what, long detail)
{
    CHECK(agora_wtime() < g_deadline, "spin on %s (%ld) past the time bound", what, detail);
}

static void flush(const void *p, size_t n)
{
    int rc = agora_flush(p, n);
    CHECK(rc == AGORA_OK, "agora_flush(%p, %zu) = %d", p, n, rc);
}

static const char *protocol_name(void)
{
    const char *p = getenv("AGORA_PROTOCOL");
    return p ? p : "sc";
}
static int observer_model(void)
{
    const char *f = getenv("AGORA_FLUSH");
    return !f || strcmp(f, "basic") != 0;
}

static void misuse(void)
{
    char *g = test_alloc(PAGE);
    int local = 0;
    CHECK(agora_flush(g, 0) == AGORA_ERR_INVALID_ARGUMENT, "a zero-size flush is refused");
    CHECK(agora_flush(g, SIZE_MAX) == AGORA_ERR_INVALID_ARGUMENT, "a wrapping flush is refused");
    CHECK(agora_flush(&local, sizeof local) == AGORA_ERR_INVALID_ARGUMENT, "a flush of the stack is refused");
    /* Past the collective allocations made so far: not allocated. */
    CHECK(agora_flush(g + 64 * PAGE, 8) == AGORA_ERR_INVALID_ARGUMENT, "a flush of unallocated memory is refused");
    CHECK(agora_flush(g, PAGE) == AGORA_OK, "a flush of the allocation works");
    CHECK(agora_flush_all() == AGORA_OK, "flush_all works");
    agora_barrier();
}

/* data: a page homed on data_home; flag, ack: words on pages homed on flag_home and ack_home. */
static void busy_wait(int rounds, int data_home, int flag_home, int ack_home)
{
    int n = agora_nranks(), me = agora_rank();
    int consumer = n - 1;
    int64_t *data = test_alloc_placed(PAGE, AGORA_PLACE_RANK, data_home);
    volatile int64_t *flag = test_alloc_placed(PAGE, AGORA_PLACE_RANK, flag_home);
    volatile int64_t *ack = test_alloc_placed(PAGE, AGORA_PLACE_RANK, ack_home);
    const int words = PAGE / 8;
    agora_barrier();
    if (me == 0) {
        for (int r = 1; r <= rounds; ++r) {
            for (int i = 0; i < words; ++i)
                data[i] = (int64_t)r * words + i;
            flush(data, PAGE);
            *flag = r;
            flush((const void *)flag, 8);
            while (1) {
                flush((const void *)ack, 8);
                if (*ack >= r) break;
                spin_check("ack", r);
            }
        }
    } else {
        int64_t seen = 0;
        while (seen < rounds) {
            flush((const void *)flag, 8);
            int64_t f = *flag;
            CHECK(f >= seen, "flag went back from %lld to %lld", (long long)seen, (long long)f);
            if (f == seen) {
                spin_check("flag", (long)seen);
                continue;
            }
            seen = f;
            flush(data, PAGE);
            /* Every value written before the flag was flushed is here. */
            for (int i = 0; i < words; ++i)
                CHECK(data[i] >= seen * words + i, "round %lld: data[%d] = %lld after flag", (long long)seen, i,
                      (long long)data[i]);
            if (me == consumer) {
                *ack = seen;
                flush((const void *)ack, 8);
            }
        }
    }
    agora_barrier();
}

/* Rank r waits for rank r-1's step s, reads its value, writes its own. */
static void pipeline(int steps)
{
    int n = agora_nranks(), me = agora_rank();
    /* done[r] on a page homed on r, val[r] on a page homed on r+1. */
    char *done_pages = test_alloc_placed((size_t)n * PAGE, AGORA_PLACE_CYCLIC, 0);
    char *val_pages = test_alloc_placed((size_t)n * PAGE, AGORA_PLACE_CYCLIC, 0);
#define DONE(r) ((volatile int64_t *)(done_pages + (size_t)(r)*PAGE))
#define VAL(r) ((volatile int64_t *)(val_pages + (size_t)(((r) + 1) % n) * PAGE + 64 * (r)))
    agora_barrier();
    for (int s = 1; s <= steps; ++s) {
        if (me > 0) {
            while (1) {
                flush((const void *)DONE(me - 1), 8);
                if (*DONE(me - 1) >= s) break;
                spin_check("left neighbour", s);
            }
            flush((const void *)VAL(me - 1), 8);
            CHECK(*VAL(me - 1) == (int64_t)s * 1000 + me - 1, "step %d: rank %d's value is %lld", s, me - 1,
                  (long long)*VAL(me - 1));
        }
        if (me < n - 1) { /* back-pressure: the right neighbour has read step s-1 */
            while (1) {
                flush((const void *)DONE(me + 1), 8);
                if (*DONE(me + 1) >= s - 1) break;
                spin_check("right neighbour", s);
            }
        }
        *VAL(me) = (int64_t)s * 1000 + me;
        flush((const void *)VAL(me), 8);
        *DONE(me) = s;
        flush((const void *)DONE(me), 8);
    }
#undef DONE
#undef VAL
    agora_barrier();
}

static void flush_all_slots(void)
{
    int n = agora_nranks(), me = agora_rank();
    volatile int64_t *slots = test_alloc_placed((size_t)n * PAGE, AGORA_PLACE_CYCLIC, 0);
    volatile int64_t *ready = test_alloc_placed(PAGE, AGORA_PLACE_RANK, n - 1);
    agora_barrier();
    /* Every rank reads every slot page once (a copy to observe). */
    for (int r = 0; r < n; ++r)
        (void)slots[r * (PAGE / 8)];
    slots[me * (PAGE / 8)] = 777 + me;
    CHECK(agora_flush_all() == AGORA_OK, "flush_all");
    ready[me] = 1;
    CHECK(agora_flush_all() == AGORA_OK, "flush_all");
    for (int r = 0; r < n; ++r) {
        while (1) {
            CHECK(agora_flush_all() == AGORA_OK, "flush_all");
            if (ready[r]) break;
            spin_check("ready", r);
        }
        /* Figure 6's second flush: ready may have been read from a home
         * page (or fetched at the read) after a write newer than the flush. */
        CHECK(agora_flush_all() == AGORA_OK, "flush_all");
        CHECK(slots[r * (PAGE / 8)] == 777 + r, "slot of rank %d is %lld after flush_all", r,
              (long long)slots[r * (PAGE / 8)]);
    }
    agora_barrier();
}

/* Wong & Rendell table IV, phases 1 and 2, between rank 0 (home of x) and rank 1. */
static void table_iv(int iterations)
{
    int me = agora_rank();
    volatile int64_t *x = test_alloc_placed(PAGE, AGORA_PLACE_RANK, 0);
    /* Rank 0 waits for this before the next barrier: a barrier's message
     * that arrives early may invalidate rank 1's copy (hlrc merges it at
     * once), which would change phase 1's counts. */
    volatile int64_t *phase1_done = test_alloc_placed(PAGE, AGORA_PLACE_RANK, 1);
    agora_stats_t before, after;
    const char *protocol = protocol_name();
    int hlrc = strcmp(protocol, "hlrc") == 0, sc = strcmp(protocol, "sc") == 0;
    agora_barrier();
    agora_stats_get(&before, AGORA_STATS_RANK);
    if (me == 1) {
        for (int i = 0; i < iterations; ++i)
            flush((const void *)x, 8);
        int64_t y = *x;
        CHECK(y == 0, "x starts at 0");
        for (int i = 0; i < iterations; ++i)
            flush((const void *)x, 8);
        agora_stats_get(&after, AGORA_STATS_RANK);
        uint64_t unmapped = after.flush_unmapped - before.flush_unmapped;
        uint64_t case1 = after.flush_case1_diffs - before.flush_case1_diffs;
        uint64_t case2 = after.flush_case2_refreshes - before.flush_case2_refreshes;
        uint64_t case3 = after.flush_case3_skips - before.flush_case3_skips;
        uint64_t refreshes = after.flush_refreshes_received - before.flush_refreshes_received;
        uint64_t n = (uint64_t)iterations;
        CHECK(after.flush_calls - before.flush_calls == 2 * n, "flush calls counted");
        if (sc) {
            CHECK(unmapped + case1 + case2 + case3 + refreshes == 0, "sc: a flush does nothing");
        } else if (observer_model()) {
            /* hlrc keeps the copy (1 refresh, then CASE-3); regc's refresh
             * invalidates it, so the later flushes find no copy. */
            CHECK(case1 == 0 && case2 == 1 && refreshes == 1,
                  "observer: one refresh (case1 %llu case2 %llu refreshes %llu)", (unsigned long long)case1,
                  (unsigned long long)case2, (unsigned long long)refreshes);
            CHECK(hlrc ? (case3 == n - 1 && unmapped == n) : (case3 == 0 && unmapped == 2 * n - 1),
                  "observer: CASE-3 %llu, unmapped %llu of %llu", (unsigned long long)case3,
                  (unsigned long long)unmapped, (unsigned long long)n);
        } else {
            CHECK(case2 == 0 && case3 == 0, "basic: no observers");
            CHECK(hlrc ? (case1 == n && refreshes == n) : (case1 == 1 && refreshes == 1),
                  "basic: a diff and a refresh per flush of a copy (case1 %llu refreshes %llu)",
                  (unsigned long long)case1, (unsigned long long)refreshes);
        }
        *phase1_done = 1;
        flush((const void *)phase1_done, 8);
    } else if (me == 0) {
        while (1) {
            flush((const void *)phase1_done, 8);
            if (*phase1_done) break;
            spin_check("phase 1", 0);
        }
    }
    agora_barrier();
    agora_stats_get(&before, AGORA_STATS_RANK);
    if (me == 0) {
        for (int i = 0; i < iterations; ++i) {
            *x = *x + 1;
            flush((const void *)x, 8);
        }
        agora_stats_get(&after, AGORA_STATS_RANK);
        uint64_t notices = after.change_notices_sent - before.change_notices_sent;
        uint64_t acks = after.notice_acks_received - before.notice_acks_received;
        uint64_t expected = !sc && observer_model() ? 1 : 0;
        CHECK(notices == expected && acks == expected, "phase 2: %llu notices, %llu acks, expected %llu",
              (unsigned long long)notices, (unsigned long long)acks, (unsigned long long)expected);
    }
    agora_barrier();
    if (me == 1) {
        flush((const void *)x, 8);
        CHECK(*x == iterations, "phase 3: x = %lld", (long long)*x);
    }
    agora_barrier();
}

static long max_rss_mib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024;
}

static void huge(size_t gib)
{
    int me = agora_rank();
    const size_t bytes = gib << 30, at = (bytes / 2) & ~(size_t)(PAGE - 1);
    volatile int64_t *shared = test_alloc(2 * PAGE); /* [0]: the region, [PAGE/8]: the flag */
    if (me == 0) {
        void *p = NULL;
        CHECK(agora_mem_malloc(bytes, &p) == AGORA_OK, "agora_mem_malloc(%zu GiB)", gib);
        shared[0] = (int64_t)(intptr_t)p;
    }
    agora_barrier();
    char *region = (char *)(intptr_t)shared[0];
    volatile int64_t *flag = shared + PAGE / 8;
    long rss = max_rss_mib();
    double t = agora_wtime();
    if (me == 1) {
        *(volatile int64_t *)(region + at) = 42;
        flush(region, bytes);
        t = agora_wtime() - t;
        *flag = 1;
        flush((const void *)flag, 8);
    } else if (me == 0) {
        do {
            flush((const void *)flag, 8);
            spin_check("huge flag", 0);
        } while (!*flag);
        t = agora_wtime();
        flush(region, bytes);
        t = agora_wtime() - t;
        CHECK(*(volatile int64_t *)(region + at) == 42, "the flushed word reads %lld",
              (long long)*(volatile int64_t *)(region + at));
    }
    long grown = max_rss_mib() - rss;
    printf("rank %d: flush of %zu GiB: %.3f s, peak resident memory +%ld MiB\n", me, gib, t, grown);
    CHECK(t < 1.0 && grown < 64, "a flush of %zu GiB with one page touched took %.2f s and %ld MiB", gib, t, grown);
    agora_barrier();
}

int main(int argc, char **argv)
{
    CHECK(agora_init(&argc, &argv) == AGORA_OK, "init");
    if (argc > 2 && !strcmp(argv[1], "huge")) {
        g_deadline = agora_wtime() + 60;
        huge((size_t)atoi(argv[2]));
        PASS("flush huge");
        agora_finalize();
        return 0;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    int steps = argc > 2 ? atoi(argv[2]) : 100;
    int n = agora_nranks();
    CHECK(n >= 2, "needs at least 2 ranks");
    g_deadline = agora_wtime() + 60;
    misuse();
    /* data and flag on different homes: neither producer nor consumer, then
     * the consumer's and the producer's own (CASE-4 and CASE-5). */
    busy_wait(rounds, 1 % n, n > 2 ? 2 % n : 0, 0);
    busy_wait(rounds, n - 1, 0, n - 1);
    pipeline(steps);
    flush_all_slots();
    table_iv(1000);
    PASS("flush");
    agora_finalize();
    return 0;
}
