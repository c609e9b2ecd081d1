/* Latency of one agora_mem_malloc_placed + agora_mem_free pair (fork-join model:
 * main on rank 0 alone; every other rank acknowledges each announcement in
 * its service). Prints the median over ROUNDS rounds of BATCH pairs, per
 * placement, called from main on rank 0 and from a thread on the last rank.
 *
 * agorarun -n N build/bin/agora-placed-latency [pages] [rounds]   */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <agora/agora.h>

enum { BATCH = 200, MAX_ROUNDS = 101 };

struct args {
    long pages, rounds, placement;
    double median_us;
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *measure(void *arg)
{
    struct args *a = arg;
    double t[MAX_ROUNDS];
    size_t bytes = (size_t)a->pages * 4096;
    for (long r = 0; r < a->rounds; r++) {
        double t0 = agora_wtime();
        for (int i = 0; i < BATCH; i++) {
            void *p = NULL;
            if (agora_mem_malloc_placed(bytes, (agora_placement_t)a->placement, agora_nranks() - 1, &p) != AGORA_OK ||
                agora_mem_free(p) != AGORA_OK) {
                fprintf(stderr, "agora_mem_malloc_placed/agora_mem_free failed\n");
                exit(1);
            }
        }
        t[r] = (agora_wtime() - t0) / BATCH * 1e6;
    }
    qsort(t, (size_t)a->rounds, sizeof t[0], cmp);
    a->median_us = t[a->rounds / 2];
    return NULL;
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    if (agora_rank() == 0) {
        long pages = argc > 1 ? atol(argv[1]) : 1;
        long rounds = argc > 2 ? atol(argv[2]) : 21;
        if (pages < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
            fprintf(stderr, "usage: placed_latency [pages >= 1] [rounds 1..%d]\n", MAX_ROUNDS);
            exit(2);
        }
        static const char *names[] = {"block", "cyclic", "rank"};
        void *memory = NULL;
        if (agora_mem_malloc(sizeof(struct args), &memory) != AGORA_OK) exit(1);
        struct args *a = memory;
        for (long placement = 0; placement < 3; placement++) {
            *a = (struct args){pages, rounds, placement, 0};
            measure(a);
            double from_main = a->median_us;
            agora_thread_t t;
            agora_thread_create_on(&t, agora_nranks() - 1, measure, a);
            agora_thread_join(t, NULL);
            printf("%d ranks, %ld page(s), %-6s: malloc_placed+free %.1f us from rank 0's main, %.1f us from a "
                   "thread on rank %d\n",
                   agora_nranks(), pages, names[placement], from_main, a->median_us, agora_nranks() - 1);
        }
        agora_mem_free(a);
    }
    agora_finalize();
    return 0;
}
