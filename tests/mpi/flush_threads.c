/* agora_flush with several threads per rank sharing a page copy (issue 30):
 * OpenMP's message-passing idiom must hold under every protocol and both
 * flush models. Writer w (one per thread, AGORA_THREADS_PER_RANK per rank)
 * owns a flag and WORDS data words interleaved with every other writer's
 * on 8 pages homed on every rank in turn, and loops:
 *     data[w] = round; flush(data); flag[w] = round; flush(flags);
 *     pick w' != w; flush(flags); f = flag[w']; flush(data);
 *     every data word of w' must be >= f
 * A flush by one thread while another of its rank writes the same page must
 * neither lose that thread's writes nor hide them from the home.
 * Usage: test_flush_threads ROUNDS */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

#define WORDS 64
#define MAX_WRITERS 64

struct shared {
    uint64_t *data;               /* WORDS x MAX_WRITERS, word i of writer w at [i * MAX_WRITERS + w] */
    uint64_t *flags;              /* one per writer, on a page of their own */
    uint64_t *stale;              /* per writer: values older than the flag said */
    agora_thread_barrier_t start; /* the writers overlap from their first round */
    int writers;
    int rounds;
};
/* What a writer is given: globals are private to each rank (no agoracc). */
struct writer_arg {
    struct shared *g;
    int w;
};

static void flush(const void *p, size_t n)
{
    int rc = agora_flush(p, n);
    CHECK(rc == AGORA_OK, "agora_flush(%p, %zu) = %d", p, n, rc);
}

static void *writer(void *arg)
{
    struct shared *g = ((struct writer_arg *)arg)->g;
    const int w = ((struct writer_arg *)arg)->w;
    const int writers = g->writers;
    volatile uint64_t *data = g->data, *flags = g->flags;
    const size_t data_bytes = sizeof(uint64_t) * WORDS * MAX_WRITERS;
    const size_t flag_bytes = sizeof(uint64_t) * (size_t)writers;
    uint64_t stale = 0;
    int rc = agora_thread_barrier_wait(&g->start);
    CHECK(rc == AGORA_OK || rc == AGORA_BARRIER_SERIAL, "start barrier: %d", rc);
    double deadline = agora_wtime() + 90;
    for (int round = 1; round <= g->rounds; round++) {
        for (int i = 0; i < WORDS; i++)
            data[i * MAX_WRITERS + w] = (uint64_t)round;
        flush((const void *)data, data_bytes);
        flags[w] = (uint64_t)round;
        flush((const void *)flags, flag_bytes);
        const int other = (w + 1 + round % (writers - 1)) % writers;
        flush((const void *)flags, flag_bytes);
        const uint64_t f = flags[other];
        flush((const void *)data, data_bytes);
        for (int i = 0; i < WORDS; i++)
            if (data[i * MAX_WRITERS + other] < f) stale++;
        CHECK(agora_wtime() < deadline, "writer %d: round %d past the time bound", w, round);
    }
    g->stale[w] = stale;
    return NULL;
}

int main(int argc, char **argv)
{
    CHECK(agora_init(&argc, &argv) == AGORA_OK, "init");
    const int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    if (agora_rank() == 0) {
        const int n = agora_nranks();
        const int writers = agora_thread_slots();
        CHECK(writers >= 2 && writers <= MAX_WRITERS, "needs 2..%d thread slots, has %d", MAX_WRITERS, writers);
        struct shared *g = test_malloc(sizeof *g);
        CHECK(g != NULL, "a global struct");
        g->data = test_malloc_placed(sizeof(uint64_t) * WORDS * MAX_WRITERS, AGORA_PLACE_CYCLIC, 0);
        g->flags = test_malloc_placed(4096, AGORA_PLACE_RANK, n - 1);
        g->stale = test_malloc(sizeof(uint64_t) * (size_t)writers);
        CHECK(g->data && g->flags && g->stale, "global arrays");
        for (int i = 0; i < WORDS * MAX_WRITERS; i++)
            g->data[i] = 0;
        for (int w = 0; w < writers; w++)
            g->flags[w] = g->stale[w] = 0;
        g->writers = writers;
        CHECK(agora_thread_barrier_init(&g->start, (unsigned)writers) == AGORA_OK, "start barrier");
        g->rounds = rounds;
        struct writer_arg *args = test_malloc(sizeof *args * (size_t)writers);
        CHECK(args != NULL, "global arguments");
        agora_thread_t t[MAX_WRITERS];
        for (int w = 0; w < writers; w++) {
            args[w].g = g;
            args[w].w = w;
            CHECK(agora_thread_create_on(&t[w], w % n, writer, &args[w]) == AGORA_OK, "create %d", w);
        }
        uint64_t stale = 0;
        for (int w = 0; w < writers; w++) {
            CHECK(agora_thread_join(t[w], NULL) == AGORA_OK, "join %d", w);
            stale += g->stale[w];
        }
        CHECK(stale == 0, "%llu stale values: a flag was seen before the data its writer flushed first",
              (unsigned long long)stale);
        printf("PASS flush_threads: %d writers x %d rounds, no stale value\n", writers, rounds);
    }
    agora_finalize();
    return 0;
}
