/* Stores made inside a span (between agora_lock and agora_unlock) by a
 * fork-join thread on one rank must be visible, without taking that lock,
 * to a thread on another rank after a thread barrier both pass, and to the
 * thread that joins the writer (agora.h: a barrier is a release and an
 * acquire for every participant; a thread's return is a release and the
 * join an acquire, under every protocol). Found by tests/mpi/stress.c.
 *
 *   span_visibility join ROUNDS     main (rank 0) reads x, creates a thread
 *                                   on rank 1 that does lock; x = r; unlock,
 *                                   joins it and must read x == r
 *   span_visibility barrier ROUNDS  a reader on rank 0 and a writer on rank 1:
 *                                   the reader reads x; barrier; the writer
 *                                   does lock; x = r; unlock; barrier; the
 *                                   reader must read x == r
 *   span_visibility both ROUNDS     join, then barrier
 * Prints how many rounds read a stale value; exit status 1 if any did. */
#include <stdint.h>
#include <string.h>

#include "check.h"

struct shared {
    volatile uint64_t *x;
    agora_lock_t *lock;
    agora_thread_barrier_t barrier;
    int rounds;
    uint64_t stale;
};

static void wait_barrier(struct shared *g)
{
    int rc = agora_thread_barrier_wait(&g->barrier);
    CHECK(rc == AGORA_OK || rc == AGORA_BARRIER_SERIAL, "barrier %d", rc);
}

static void *span_writer(void *arg)
{
    struct shared *g = arg;
    uint64_t r = *g->x + 1;
    CHECK(agora_lock(g->lock) == AGORA_OK, "lock");
    *g->x = r;
    CHECK(agora_unlock(g->lock) == AGORA_OK, "unlock");
    return NULL;
}

static void *barrier_writer(void *arg)
{
    struct shared *g = arg;
    for (int r = 1; r <= g->rounds; r++) {
        wait_barrier(g);
        CHECK(agora_lock(g->lock) == AGORA_OK, "lock");
        *g->x = (uint64_t)r;
        CHECK(agora_unlock(g->lock) == AGORA_OK, "unlock");
        wait_barrier(g);
    }
    return NULL;
}

static void *barrier_reader(void *arg)
{
    struct shared *g = arg;
    for (int r = 1; r <= g->rounds; r++) {
        (void)*g->x; /* a copy of x's page here */
        wait_barrier(g);
        wait_barrier(g);
        uint64_t v = *g->x;
        if (v != (uint64_t)r) {
            if (g->stale++ < 5) fprintf(stderr, "round %d: read %llu after the barrier\n", r, (unsigned long long)v);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    CHECK(agora_init(&argc, &argv) == AGORA_OK, "init");
    int status = 0;
    if (agora_rank() == 0) {
        CHECK(agora_nranks() >= 2, "needs 2 ranks");
        const char *arg = argc > 1 ? argv[1] : "both";
        const int both = !strcmp(arg, "both");
        CHECK(both || !strcmp(arg, "join") || !strcmp(arg, "barrier"), "mode %s: join, barrier or both", arg);
        for (int pass = 0; pass < (both ? 2 : 1); pass++) {
            const char *mode = both ? (pass ? "barrier" : "join") : arg;
            struct shared *g = test_malloc(sizeof *g);
            CHECK(g != NULL, "global struct");
            memset(g, 0, sizeof *g);
            g->x = test_malloc_placed(4096, AGORA_PLACE_RANK, 1); /* homed on the writer's rank */
            g->lock = test_lock_create();
            g->rounds = argc > 2 ? atoi(argv[2]) : 100;
            CHECK(g->x && g->lock, "allocations");
            agora_thread_t t, u;
            if (!strcmp(mode, "join")) {
                for (int r = 1; r <= g->rounds; r++) {
                    (void)*g->x; /* a copy of x's page on rank 0 */
                    CHECK(agora_thread_create_on(&t, 1, span_writer, g) == AGORA_OK, "create");
                    CHECK(agora_thread_join(t, NULL) == AGORA_OK, "join");
                    uint64_t v = *g->x;
                    if (v != (uint64_t)r) {
                        if (g->stale++ < 5)
                            fprintf(stderr, "round %d: main read %llu after the join\n", r, (unsigned long long)v);
                        *g->x = (uint64_t)r; /* go on from the expected value (no race: nobody else runs) */
                    }
                }
            } else {
                CHECK(agora_thread_barrier_init(&g->barrier, 2) == AGORA_OK, "barrier init");
                CHECK(agora_thread_create_on(&t, 0, barrier_reader, g) == AGORA_OK, "create reader");
                CHECK(agora_thread_create_on(&u, 1, barrier_writer, g) == AGORA_OK, "create writer");
                CHECK(agora_thread_join(t, NULL) == AGORA_OK && agora_thread_join(u, NULL) == AGORA_OK, "joins");
            }
            printf("span_visibility %s under %s: %llu of %d rounds read a stale value\n", mode, agora_protocol_name(),
                   (unsigned long long)g->stale, g->rounds);
            status |= g->stale > 0;
        }
    }
    agora_finalize();
    return status;
}
