/* AGORA_TRACE / AGORA_PROFILE on real ranks: every kind of traced event
 * happens here at least once on every rank. Read and write faults on pages
 * homed by the other rank, a contended lock, barriers, a reduce, an
 * agora_malloc; and a rank that computes outside Agora while the other
 * fetches its pages, so that its service thread naps and is woken to serve
 * (a service wake-up). The checks on the files are in observe_check.py. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { PAGES = 8 };

/* Outside Agora for about `ms` milliseconds (no syscalls that Agora sees). */
static void compute(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

int main(int argc, char **argv)
{
    CHECK(agora_init(&argc, &argv) == AGORA_OK, "agora_init");
    int me = agora_rank(), n = agora_nranks();
    CHECK(n == 2, "run on 2 ranks (got %d)", n);
    size_t page = 4096;
    char *a = test_alloc(PAGES * page); /* block placement: rank 0 homes pages 0..3 */
    long *sum = test_alloc(sizeof(long));
    agora_lock_t *lk = test_lock_create();
    long *mine = test_malloc(64);
    CHECK(a && sum && lk && mine, "allocations");
    mine[0] = me;

    /* Writes to the other rank's pages (write faults), then reads of them. */
    for (int round = 0; round < 3; round++) {
        int first = me == 0 ? PAGES / 2 : 0;
        for (int p = first; p < first + PAGES / 2; p++)
            a[p * page + 8 * me + round] = (char)(1 + me);
        agora_barrier();
        /* Each rank writes its own home pages; the other then reads them
         * (read faults: its copies are stale). */
        int home = me == 0 ? 0 : PAGES / 2, other = me == 0 ? PAGES / 2 : 0;
        for (int p = home; p < home + PAGES / 2; p++)
            a[p * page + 200] = (char)(10 + round);
        agora_barrier();
        for (int p = other; p < other + PAGES / 2; p++)
            CHECK(a[p * page + 200] == 10 + round, "page %d holds %d", p, a[p * page + 200]);
        for (int i = 0; i < 50; i++) {
            agora_lock(lk);
            *sum += 1;
            agora_unlock(lk);
        }
        agora_barrier();
    }
    /* Rank 1 computes outside Agora; rank 0 reads pages rank 1 homes (fresh
     * copies after rank 1's writes), which rank 1's napping service serves. */
    if (me == 1) {
        for (int p = PAGES / 2; p < PAGES; p++)
            a[p * page + 100] = 5;
    }
    agora_barrier();
    if (me == 1)
        compute(300);
    else {
        usleep(50000);
        long seen = 0;
        for (int p = PAGES / 2; p < PAGES; p++)
            seen += a[p * page + 100];
        CHECK(seen == 5 * PAGES / 2, "read rank 1's writes (got %ld)", seen);
    }
    agora_barrier();
    double r = 1.0;
    CHECK(agora_reduce(&r, 1, AGORA_DOUBLE, AGORA_SUM) == AGORA_OK && r == 2.0, "reduce");
    agora_barrier();
    CHECK(*sum == 300, "lock-protected sum %ld", *sum);
    PASS("observe");
    agora_finalize();
    return 0;
}
