/* Sequential-consistency litmus tests on real ranks, each repeated many
 * times with fresh values. Variables live on separate pages with homes
 * spread over the ranks (cyclic placement), so every access in a round can
 * be a remote fault, an invalidation or a local hit depending on timing.
 *
 *   litmus sb|mp|iriw|corr ITERATIONS                                       */
#include <string.h>

#include "check.h"

#define PAGE 4096
#define VAR(i) (*(volatile long *)(vars + (i)*PAGE))

static char *vars;

/* Store buffering: r0: x=1; a=y.  r1: y=1; b=x.  a==0 && b==0 is forbidden. */
static void store_buffering(int iters)
{
    long *seen = test_alloc(2 * PAGE);
    int me = agora_rank();
    long relaxed = 0;
    for (int it = 1; it <= iters; it++) {
        if (me < 2) {
            VAR(me) = it;                      /* x = VAR(0), y = VAR(1) */
            seen[me * PAGE / 8] = VAR(1 - me); /* read the other's variable */
        }
        agora_barrier();
        if (me == 0) {
            long a = seen[0], b = seen[PAGE / 8];
            CHECK(!(a < it && b < it), "iteration %d: both reads missed the other's store (a=%ld b=%ld)", it, a, b);
            if (a == it && b == it) relaxed++; /* both saw both: an interleaving, fine */
        }
        agora_barrier();
    }
    if (me == 0) printf("sb: %d iterations, %ld with both stores seen by both\n", iters, relaxed);
}

/* Message passing: r0: data=it; flag=it.  r1: wait flag==it; data must be it. */
static void message_passing(int iters)
{
    int me = agora_rank();
    for (int it = 1; it <= iters; it++) {
        if (me == 0) {
            VAR(0) = it;
            VAR(1) = it;
        } else if (me == 1) {
            while (VAR(1) != it) {
            }
            long d = VAR(0);
            CHECK(d == it, "iteration %d: saw flag but data %ld", it, d);
        }
        agora_barrier();
    }
}

/* Independent reads of independent writes: r0: x=it. r1: y=it.
 * r2: a=x; b=y.  r3: c=y; d=x.  (a,b,c,d) = (new,old,new,old) is forbidden:
 * the two readers would disagree on the order of the two writes. */
static void iriw(int iters)
{
    int me = agora_rank();
    for (int it = 1; it <= iters; it++) {
        if (me == 0)
            VAR(0) = it;
        else if (me == 1)
            VAR(1) = it;
        else if (me == 2) {
            long a = VAR(0), b = VAR(1);
            VAR(2) = (a == it) * 2 + (b == it);
        } else if (me == 3) {
            long c = VAR(1), d = VAR(0);
            VAR(3) = (c == it) * 2 + (d == it);
        }
        agora_barrier();
        if (me == 0) {
            long r2 = VAR(2), r3 = VAR(3);
            CHECK(!(r2 == 2 && r3 == 2), "iteration %d: readers saw the writes in opposite orders", it);
        }
        agora_barrier();
    }
}

/* Coherence of read-read: a rank reading one location twice never sees it go
 * back in time while another rank keeps increasing it. */
static void corr(int iters)
{
    int me = agora_rank();
    if (me == 0) {
        for (int v = 1; v <= iters; v++)
            VAR(0) = v;
    } else {
        long last = 0;
        while (last < iters) {
            long first = VAR(0), second = VAR(0);
            CHECK(second >= first && first >= last, "values went back: %ld then %ld after %ld", first, second, last);
            last = second;
        }
    }
    agora_barrier();
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    const char *name = argc > 1 ? argv[1] : "sb";
    int iters = argc > 2 ? atoi(argv[2]) : 1000;
    vars = test_alloc_placed(8 * PAGE, AGORA_PLACE_CYCLIC, 0);
    if (!strcmp(name, "sb"))
        store_buffering(iters);
    else if (!strcmp(name, "mp"))
        message_passing(iters);
    else if (!strcmp(name, "iriw")) {
        CHECK(agora_nranks() >= 4, "iriw needs 4 ranks");
        iriw(iters);
    } else if (!strcmp(name, "corr"))
        corr(iters);
    else
        CHECK(0, "unknown litmus test %s", name);
    PASS(name);
    agora_finalize();
    return 0;
}
