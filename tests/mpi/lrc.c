/* Release-consistency tests on real ranks, for protocols that are not
 * sequentially consistent (hlrc), and valid under sc as well.
 *
 *   lrc mp ITERATIONS        message passing through a lock: after acquiring
 *                            the lock and seeing the flag, the data must be seen
 *   lrc sb ITERATIONS        store buffering without synchronisation: both
 *                            reads may miss (relaxed outcome, counted, allowed);
 *                            after the barrier both stores must be seen
 *   lrc counter ITERATIONS   every rank increments one lock-protected counter
 *   lrc false ITERATIONS     ranks write interleaved words of shared pages
 *                            between barriers; every word is checked each time
 *   lrc handoffs COUNT       ranks 0 and 1 pass a lock back and forth COUNT
 *                            times, writing under it; the write notices kept and
 *                            the resident memory must stay flat          */
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

static long resident_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    if (f) fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* r0: data = it; lock; flag = it; unlock.   r1: lock; f = flag; unlock until
 * f == it; then data must be it. data and flag are on different pages. */
static void message_passing(int iters)
{
    long *mem = test_alloc(2 * PAGE);
    volatile long *data = mem, *flag = mem + PAGE / 8;
    agora_lock_t *lock = test_lock_create();
    int me = agora_rank();
    for (int it = 1; it <= iters; it++) {
        if (me == 0) {
            *data = it;
            agora_lock(lock);
            *flag = it;
            agora_unlock(lock);
        } else if (me == 1) {
            long f;
            do {
                agora_lock(lock);
                f = *flag;
                agora_unlock(lock);
            } while (f != it);
            long d = *data;
            CHECK(d == it, "iteration %d: saw the flag through the lock but data %ld", it, d);
        }
        agora_barrier();
    }
}

/* r0: x = it; a = y.   r1: y = it; b = x.  No synchronisation between the
 * store and the load, so release consistency allows a < it && b < it. */
static void store_buffering(int iters)
{
    long *mem = test_alloc(4 * PAGE);
    volatile long *x = mem, *y = mem + PAGE / 8;
    long *seen = mem + 2 * PAGE / 8; /* seen[0] on page 2, seen[PAGE/8] on page 3 */
    int me = agora_rank();
    long relaxed = 0;
    for (int it = 1; it <= iters; it++) {
        if (me == 0) {
            *x = it;
            seen[0] = *y;
        } else if (me == 1) {
            *y = it;
            seen[PAGE / 8] = *x;
        }
        agora_barrier();
        if (me < 2) {
            CHECK(*x == it && *y == it, "iteration %d: after the barrier x=%ld y=%ld", it, *x, *y);
        }
        if (me == 0) {
            long a = seen[0], b = seen[PAGE / 8];
            CHECK(a <= it && b <= it && a >= it - 1 && b >= it - 1, "iteration %d: a=%ld b=%ld", it, a, b);
            if (a < it && b < it) relaxed++;
        }
        agora_barrier();
    }
    if (me == 0) printf("sb: %d iterations, %ld with both stores missed (allowed)\n", iters, relaxed);
}

static void counter(int iters)
{
    long *c = test_alloc(PAGE);
    agora_lock_t *lock = test_lock_create();
    for (int i = 0; i < iters; i++) {
        agora_lock(lock);
        (*c)++;
        agora_unlock(lock);
    }
    agora_barrier();
    CHECK(*c == (long)iters * agora_nranks(), "counter %ld, expected %ld", *c, (long)iters * agora_nranks());
}

/* Words w of 8 pages, interleaved: rank r owns w with w % N == r. */
static void false_sharing(int iters)
{
    const int words = 8 * PAGE / 8;
    long *a = test_alloc(words * sizeof(long));
    int me = agora_rank(), n = agora_nranks();
    for (int it = 1; it <= iters; it++) {
        for (int w = me; w < words; w += n)
            a[w] = (long)it * 100000 + w;
        agora_barrier();
        for (int w = 0; w < words; w++)
            CHECK(a[w] == (long)it * 100000 + w, "iteration %d: word %d is %ld", it, w, a[w]);
        agora_barrier();
    }
}

static void handoffs(int count)
{
    long *mem = test_alloc(2 * PAGE);
    volatile long *turn = mem, *total = mem + 1;
    agora_lock_t *lock = test_lock_create();
    int me = agora_rank();
    long rss_early = 0, kept_early = 0;
    CHECK(agora_nranks() >= 2, "hand-offs need two ranks");
    if (me < 2) {
        /* Strict alternation: every acquire that makes progress follows a
         * release on the other rank, so the lock and the writes move. */
        for (int i = 0; i < count; i++) {
            for (;;) {
                agora_lock(lock);
                if (*turn == me) break;
                agora_unlock(lock);
            }
            *turn = 1 - me;
            (*total)++;
            agora_unlock(lock);
            if (i == count / 10) {
                rss_early = resident_kib();
                kept_early = stat_value("notices_kept_peak");
            }
        }
    }
    agora_barrier();
    CHECK(*total == 2L * count, "total %ld, expected %ld", *total, 2L * count);
    if (me < 2) {
        long rss = resident_kib(), kept = stat_value("notices_kept_peak");
        printf("rank %d: %d hand-offs each way; resident %ld KiB at 10%%, %ld KiB at the end; "
               "write-notice intervals kept: peak %ld at 10%%, %ld at the end\n",
               me, count, rss_early, rss, kept_early, kept);
        CHECK(kept <= 64, "write notices are not collected: %ld intervals kept", kept);
        CHECK(rss - rss_early < 8 * 1024, "resident memory grew by %ld KiB", rss - rss_early);
    }
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    CHECK(argc == 3, "usage: lrc mp|sb|counter|false|handoffs N");
    const char *name = argv[1];
    int n = atoi(argv[2]);
    if (!strcmp(name, "mp"))
        message_passing(n);
    else if (!strcmp(name, "sb"))
        store_buffering(n);
    else if (!strcmp(name, "counter"))
        counter(n);
    else if (!strcmp(name, "false"))
        false_sharing(n);
    else if (!strcmp(name, "handoffs"))
        handoffs(n);
    else
        CHECK(0, "unknown test %s", name);
    PASS(name);
    agora_finalize();
    return 0;
}
