/* The service thread of a rank whose application thread is away from the
 * library (docs/service.md, "Doorbell"), on 2 ranks:
 *   idle:  both ranks sleep IDLE_MS; the process's CPU time and voluntary
 *          context switches over that time are its service thread's (MPI's
 *          own threads block) -- what an idle service costs;
 *   busy:  rank 1 computes for BUSY_MS without entering the library while
 *          rank 0 read-faults FAULTS pages rank 1 homes and wrote, each
 *          served by rank 1's service thread: the median fault, and the
 *          doorbells rank 0 rang across hosts (stats: remote_doorbells).
 *          Rank 0 sleeps GAP_US between faults, so that the service thread
 *          is back at its longest nap (its naps after serving restart at
 *          1 us and double) and each fault shows what the wake-up costs.
 * Prints one line per figure; tests/cluster/cluster_test.sh runs it across
 * emulated hosts with and without the remote doorbell and judges them.
 * usage: test_service_wakeup [FAULTS [IDLE_MS [BUSY_MS [GAP_US]]]] */
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "check.h"

enum { kPage = 4096 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    CHECK(agora_init(&argc, &argv) == AGORA_OK, "agora_init failed");
    int me = agora_rank();
    CHECK(agora_nranks() == 2, "runs on 2 ranks, not %d", agora_nranks());
    int faults = argc > 1 ? atoi(argv[1]) : 100;
    int idle_ms = argc > 2 ? atoi(argv[2]) : 2000;
    int busy_ms = argc > 3 ? atoi(argv[3]) : 2000;
    int gap_us = argc > 4 ? atoi(argv[4]) : 3000;
    CHECK(faults >= 1 && faults <= 100000 && idle_ms >= 1 && busy_ms >= 1 && gap_us >= 0,
          "usage: test_service_wakeup [FAULTS (1..100000) [IDLE_MS [BUSY_MS [GAP_US]]]]");

    /* Idle: nobody asks anything; only the service thread's naps run. */
    CHECK(agora_barrier() == AGORA_OK, "barrier");
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    double t0 = now();
    sleep_seconds(idle_ms / 1000.0);
    double wall = now() - t0;
    getrusage(RUSAGE_SELF, &r1);
    double cpu = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
                 ((r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec)) * 1e-6;
    printf("rank %d idle: cpu_pct %.2f wakeups_per_s %.0f\n", me, 100.0 * cpu / wall,
           (r1.ru_nvcsw - r0.ru_nvcsw) / wall);
    fflush(stdout);

    /* Busy home: rank 1 owns and writes the pages, then computes. */
    volatile char *pages = test_alloc_placed((size_t)faults * kPage, AGORA_PLACE_RANK, 1);
    CHECK(pages != NULL, "agora_alloc_placed failed");
    if (me == 1)
        for (int i = 0; i < faults; ++i)
            pages[(size_t)i * kPage] = (char)(i + 1);
    CHECK(agora_barrier() == AGORA_OK, "barrier");
    CHECK(agora_stats_reset() == AGORA_OK, "agora_stats_reset");
    CHECK(agora_barrier() == AGORA_OK, "barrier");
    if (me == 1) {
        double end = now() + busy_ms / 1000.0;
        volatile uint64_t sink = 0;
        while (now() < end)
            for (int i = 0; i < 100000; ++i)
                sink += (uint64_t)i * i;
    } else {
        double *us = malloc(sizeof(double) * (size_t)faults);
        CHECK(us != NULL, "malloc");
        for (int i = 0; i < faults; ++i) {
            if (gap_us) sleep_seconds(gap_us * 1e-6);
            double t = now();
            char c = pages[(size_t)i * kPage];
            us[i] = (now() - t) * 1e6;
            CHECK(c == (char)(i + 1), "page %d reads %d, rank 1 wrote %d", i, c, (char)(i + 1));
        }
        qsort(us, (size_t)faults, sizeof *us, compare);
        agora_stats_t s;
        CHECK(agora_stats_get(&s, AGORA_STATS_RANK) == AGORA_OK, "agora_stats_get");
        printf("rank 0 busy home: gap_us %d faults %d median_us %.1f p90_us %.1f remote_doorbells %llu\n", gap_us,
               faults, us[faults / 2], us[faults * 9 / 10], (unsigned long long)s.remote_doorbells);
        fflush(stdout);
        free(us);
    }
    CHECK(agora_barrier() == AGORA_OK, "barrier");
    PASS("service_wakeup");
    agora_finalize();
    return 0;
}
