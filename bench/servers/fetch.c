/* fetch -- the heavy DSM load of bench/servers (Wong & Rendell §IV used NAS BT
 * with round-robin page placement, so that n-1 of n page accesses fetch).
 *
 * An array of P pages placed cyclically (with memory servers: striped over
 * them). Each iteration every rank rewrites the pages it owns (page p is
 * rank p % C's), passes a barrier, then reads every page whole and sums it,
 * and passes a barrier: each rank fetches the (C-1)/C of the pages others
 * wrote (and, with memory servers, sends its own as diffs to their servers).
 * The sums are checked against the values every iteration wrote.
 *
 * Usage: bench_servers_fetch [PAGES [ITERATIONS]]   (default 1024 40)
 * Prints one JSON line (rank 0): the time of the iterations, and the job's
 * page fetches and messages (the compute ranks'; agora_stats_get, AGORA_STATS_JOB). With
 * BENCH_PIN_CPU=C the program's thread runs on CPU C only (as bench_ep). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include <agora/agora.h>

#define PAGE 4096
#define WORDS (PAGE / sizeof(long))

int main(int argc, char **argv)
{
    if (agora_init(&argc, &argv) != AGORA_OK) return 1;
    const char *pin = getenv("BENCH_PIN_CPU");
    if (pin && *pin) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(atoi(pin), &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
            fprintf(stderr, "BENCH_PIN_CPU=%s: cannot pin to that CPU\n", pin);
            return 1;
        }
    }
    long pages = argc > 1 ? atol(argv[1]) : 1024, iters = argc > 2 ? atol(argv[2]) : 40;
    int me = agora_rank(), c = agora_nranks();
    void *memory = NULL;
    if (agora_mem_alloc_placed((size_t)pages * PAGE, AGORA_PLACE_CYCLIC, 0, &memory) != AGORA_OK) return 1;
    long *a = memory;
    agora_barrier();
    agora_stats_t before, after;
    agora_stats_get(&before, AGORA_STATS_JOB);
    int bad = 0;
    double t0 = agora_wtime();
    for (long it = 1; it <= iters; it++) {
        for (long p = me; p < pages; p += c)
            for (long w = 0; w < (long)WORDS; w += 8)
                a[p * WORDS + w] = it * p + w;
        agora_barrier();
        for (long p = 0; p < pages; p++) {
            long sum = 0, expect = 0;
            for (long w = 0; w < (long)WORDS; w += 8) {
                sum += a[p * WORDS + w];
                expect += it * p + w;
            }
            bad += sum != expect;
        }
        agora_barrier();
    }
    double seconds = agora_wtime() - t0;
    agora_stats_get(&after, AGORA_STATS_JOB);
    if (bad) fprintf(stderr, "rank %d: fetch: %d pages read wrong sums\n", me, bad);
    if (me == 0)
        printf("{\"program\":\"fetch\",\"pages\":%ld,\"iterations\":%ld,\"ranks\":%d,\"time_s\":%.6f,"
               "\"pages_fetched\":%llu,\"messages_sent\":%llu,\"bytes_sent\":%llu,\"valid\":%d}\n",
               pages, iters, c, seconds, (unsigned long long)(after.pages_fetched - before.pages_fetched),
               (unsigned long long)(after.messages_sent - before.messages_sent),
               (unsigned long long)(after.bytes_sent - before.bytes_sent), bad == 0);
    agora_finalize();
    return bad != 0;
}
