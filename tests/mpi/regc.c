/* Regional consistency on real ranks (Samhita/RegC, rules 1-3).
 *
 *   regc crosslock ITERATIONS FILE  rule 1 across locks: rank 0 stores data
 *        in an ordinary region, starts a span of lock A and says so through
 *        FILE (outside Agora); rank 1, once it has read that, starts a span of
 *        lock B (another lock, another manager) and must see the store. Under
 *        hlrc (release consistency per lock) it need not: the test fails there.
 *   regc nested ITERATIONS          rule 2 with nested spans: a store in B
 *        nested in A travels with both locks, a store in A only with A
 *   regc accumulator ITERATIONS updates|fetches
 *        every rank adds to one lock-protected word. `updates`: the word's page
 *        is fetched at most twice per rank and updates are applied (regc's
 *        fine-grain updates); `fetches`: the page moves at most acquires (any
 *        protocol). The sum is checked either way.
 *   regc homes ITERATIONS          (2 ranks) rank 1 stores to a page homed on
 *        rank 0 before each span. Rule 1 needs the store applied at rank 0
 *        before the span starts, and the home's acknowledgement of the diff
 *        says so: no broadcast. Counted against the same spans without the
 *        store, the store costs rank 1 exactly one message (the diff) per span. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define PAGE 4096

static long stat_value(const char *key)
{
    char buf[4096];
    agora_stats_json(buf, sizeof buf);
    char *at = strstr(buf, key);
    return at ? atol(at + strlen(key) + 3) : -1; /* "key": value */
}

static void cross_lock(int iters, const char *path)
{
    long *mem = test_alloc(2 * PAGE);
    volatile long *data = mem, *other = mem + PAGE / 8;
    agora_lock_t *locks = test_lock_array_create(2); /* consecutive ids: different managers */
    int me = agora_rank();
    int fd = -1;
    if (me == 0) {
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        CHECK(fd >= 0, "cannot create %s", path);
        long zero = 0;
        CHECK(pwrite(fd, &zero, sizeof zero, 0) == sizeof zero, "write %s", path);
    }
    agora_barrier();
    if (me == 1) {
        fd = open(path, O_RDONLY);
        CHECK(fd >= 0, "cannot open %s", path);
    }
    for (int it = 1; it <= iters; it++) {
        if (me == 0) {
            *data = it; /* ordinary store */
            agora_lock(&locks[0]);
            /* the span of A has started: every later span anywhere sees data */
            long v = it;
            CHECK(pwrite(fd, &v, sizeof v, 0) == sizeof v, "write %s", path);
            agora_unlock(&locks[0]);
        } else if (me == 1) {
            long cached = *data; /* a valid copy of the page, from before the store */
            CHECK(cached == it - 1 || cached == it, "iteration %d: data %ld before the span", it, cached);
            long v = 0;
            while (v < it) {
                CHECK(pread(fd, &v, sizeof v, 0) == sizeof v, "read %s", path);
                if (v < it) usleep(20);
            }
            agora_lock(&locks[1]);
            long d = *data;
            *other = it; /* something to do in the span */
            agora_unlock(&locks[1]);
            CHECK(d == it,
                  "iteration %d: a span of lock B started after rank 0's span of lock A, "
                  "but the ordinary store before it is not visible (data %ld): rule 1",
                  it, d);
        }
        agora_barrier();
    }
    if (fd >= 0) close(fd);
    if (me == 0) unlink(path);
}

static void nested(int iters)
{
    long *mem = test_alloc(4 * PAGE);
    volatile long *x = mem, *y = mem + PAGE / 8, *fb = mem + 2 * PAGE / 8, *fa = mem + 3 * PAGE / 8;
    agora_lock_t *locks = test_lock_array_create(2);
    agora_lock_t *a = &locks[0], *b = &locks[1];
    int me = agora_rank();
    for (int it = 1; it <= iters; it++) {
        if (me == 0) {
            agora_lock(a);
            agora_lock(b);
            *x = it;
            *fb = it;
            agora_unlock(b);
            *y = it;
            *fa = it;
            agora_unlock(a);
        } else if (me == 1) {
            long f;
            do {
                agora_lock(b);
                f = *fb;
                long seen = *x;
                agora_unlock(b);
                CHECK(f < it || seen == it, "iteration %d: B's flag seen but not x (%ld)", it, seen);
            } while (f != it);
            do {
                agora_lock(a);
                f = *fa;
                long sx = *x, sy = *y;
                agora_unlock(a);
                CHECK(f < it || (sx == it && sy == it), "iteration %d: A's flag seen, x=%ld y=%ld", it, sx, sy);
            } while (f != it);
        }
        agora_barrier();
    }
}

static void accumulator(int iters, const char *expect)
{
    long *acc = test_alloc(PAGE);
    agora_lock_t *lock = test_lock_create();
    agora_barrier();
    long fetched0 = stat_value("pages_fetched"), updates0 = stat_value("updates_applied");
    for (int i = 0; i < iters; i++) {
        agora_lock(lock);
        (*acc)++;
        agora_unlock(lock);
    }
    long fetched = stat_value("pages_fetched") - fetched0;
    long updates = stat_value("updates_applied") - updates0;
    agora_barrier();
    CHECK(*acc == (long)iters * agora_nranks(), "sum %ld, expected %ld", *acc, (long)iters * agora_nranks());
    if (!strcmp(expect, "updates")) {
        CHECK(fetched <= 2,
              "the accumulator's page was fetched %ld times in %d spans: updates should "
              "have kept the copy current",
              fetched, iters);
        CHECK(agora_rank() == 0 || agora_nranks() == 1 || updates > 0, "no update applied");
    } else {
        CHECK(fetched <= iters, "page fetched %ld times in %d spans", fetched, iters);
    }
    if (agora_rank() == 0)
        printf("accumulator: rank 0 fetched the page %ld times, applied %ld updates\n", fetched, updates);
}

static void homes(int iters)
{
    CHECK(agora_nranks() == 2, "homes runs on 2 ranks, not %d", agora_nranks());
    long *data = test_alloc_placed(PAGE, AGORA_PLACE_RANK, 0);
    agora_lock_t *lock = test_lock_create();
    agora_barrier();
    if (agora_rank() == 1) {
        data[0] = 0; /* the copy is here and written once: no fetch below */
        agora_lock(lock);
        agora_unlock(lock);
        long m0 = stat_value("messages_sent");
        for (int i = 0; i < iters; i++) {
            agora_lock(lock);
            agora_unlock(lock);
        }
        long m1 = stat_value("messages_sent");
        for (int i = 0; i < iters; i++) {
            data[0] = i + 1;
            agora_lock(lock);
            agora_unlock(lock);
        }
        long m2 = stat_value("messages_sent");
        printf("homes: rank 1 sent %ld messages for %d spans, %ld with a store to rank 0's page before each\n", m1 - m0,
               iters, m2 - m1);
        CHECK(m2 - m1 - (m1 - m0) == iters,
              "the stores cost %ld messages in %d spans: expected one diff per span and no broadcast to the "
              "page's home",
              m2 - m1 - (m1 - m0), iters);
    }
    agora_barrier();
    CHECK(data[0] == iters, "rank 0's page holds %ld, expected %d", data[0], iters);
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    const char *how = argc > 1 ? argv[1] : "";
    int iters = argc > 2 ? atoi(argv[2]) : 100;
    if (!strcmp(how, "crosslock")) {
        CHECK(argc > 3, "usage: regc crosslock ITERATIONS FILE");
        cross_lock(iters, argv[3]);
    } else if (!strcmp(how, "nested")) {
        nested(iters);
    } else if (!strcmp(how, "homes")) {
        homes(iters);
    } else if (!strcmp(how, "accumulator")) {
        accumulator(iters, argc > 3 ? argv[3] : "fetches");
    } else {
        CHECK(0, "usage: regc crosslock|nested|accumulator|homes ITERATIONS ...");
    }
    PASS(how);
    agora_finalize();
    return 0;
}
