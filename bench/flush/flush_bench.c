/* agora_flush benchmarks (docs/flush.md, bench/flush/run_flush.py): Wong
 * & Rendell §IV-C and §IV-D, run under AGORA_FLUSH=observer or basic.
 *
 *   flush_bench phases N
 *     The 4-phase synthetic benchmark (table IV), 2 ranks: rank 0 homes x.
 *     Phase 1: rank 1 flushes x N times (not mapped), reads it, flushes N
 *     times; phase 2: rank 0 increments and flushes x N times; phase 3:
 *     rank 1 flushes while x equals what it read. Phases are separated by
 *     agora_reduce, which (like the paper's sync()) carries no consistency.
 *     Prints, per phase, the flush events each rank received.
 *
 *   flush_bench busywait G WAIT
 *     Experiment #3 (table V), >= 3 ranks: rank 0 does one 5-point stencil
 *     sweep over two G x G grids of doubles homed on rank 1 (every page
 *     fetched), ranks 2.. busy-wait (WAIT=1) on a flag homed on rank 0 with
 *     a flush in the loop, or the same with a 20 us nap per turn (WAIT=2: a
 *     waiter that does not take the worker's core, as on the paper's cluster
 *     where each had its own node), or wait in a barrier (WAIT=0). Prints
 *     rank 0's sweep time and the flush events rank 0 received until every
 *     waiter had seen the flag.
 *
 *   flush_bench pipeline STEPS WORK
 *     An LU-style pipeline: at each step rank r waits (flush loop) for rank
 *     r-1's step counter, reads its value, computes WORK multiply-adds and
 *     publishes its own value and counter (single slot, back-pressure from
 *     rank r+1). Prints the time and the job's flush events.
 *
 * One line "FLUSH_RESULT {json}" from rank 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <agora/agora.h>

#define PAGE 4096

static void die(const char *what)
{
    fprintf(stderr, "flush_bench: %s\n", what);
    exit(2);
}

static void flush(const void *p, size_t n)
{
    if (agora_flush(p, n) != AGORA_OK) die("agora_flush failed");
}

static const char *model(void)
{
    const char *f = getenv("AGORA_FLUSH");
    return f ? f : "observer";
}
static const char *protocol(void)
{
    const char *p = getenv("AGORA_PROTOCOL");
    return p ? p : "sc";
}

/* The flush events a rank received (Wong & Rendell's "flush related events"). */
typedef struct {
    int64_t flushes, diffs, refresh_requests, refreshes, notices, acks, messages;
} events_t;

static events_t events_now(void)
{
    agora_stats_t s;
    agora_stats_get(&s, AGORA_STATS_RANK);
    events_t e = {(int64_t)s.flush_calls,
                  (int64_t)s.flush_diffs_received,
                  (int64_t)s.flush_refresh_requests_received,
                  (int64_t)s.flush_refreshes_received,
                  0,
                  (int64_t)s.notice_acks_received,
                  (int64_t)s.messages_sent};
    /* A rank receives the notices its peers' homes sent it: counted at the sender. */
    e.notices = (int64_t)s.change_notices_sent;
    return e;
}
static events_t events_minus(events_t a, events_t b)
{
    events_t d = {a.flushes - b.flushes,     a.diffs - b.diffs,     a.refresh_requests - b.refresh_requests,
                  a.refreshes - b.refreshes, a.notices - b.notices, a.acks - b.acks,
                  a.messages - b.messages};
    return d;
}

/* Every rank's events of a phase, on every rank (7 numbers per rank). */
static void gather(events_t mine, int64_t *all)
{
    int n = agora_nranks(), me = agora_rank();
    memset(all, 0, sizeof(int64_t) * 7 * (size_t)n);
    memcpy(all + 7 * me, &mine, sizeof mine);
    if (agora_reduce(all, 7 * (size_t)n, AGORA_INT64, AGORA_SUM) != AGORA_OK) die("agora_reduce failed");
}

static void print_events(const char *key, const int64_t *e)
{
    printf("\"%s\": {\"flushes\": %lld, \"diffs\": %lld, \"refresh_requests\": %lld, \"refreshes\": %lld, "
           "\"notices_sent\": %lld, \"notice_acks\": %lld, \"messages_sent\": %lld}",
           key, (long long)e[0], (long long)e[1], (long long)e[2], (long long)e[3], (long long)e[4], (long long)e[5],
           (long long)e[6]);
}

static void sync_ranks(void)
{ /* no consistency, like the paper's sync() */
    int64_t z = 0;
    if (agora_reduce(&z, 1, AGORA_INT64, AGORA_SUM) != AGORA_OK) die("agora_reduce failed");
}

/* Collective placed allocation that must succeed. */
static void *alloc_placed(size_t bytes, agora_placement_t placement, int rank)
{
    void *p = NULL;
    agora_status_t status = agora_mem_alloc_placed(bytes, placement, rank, &p);
    if (status != AGORA_OK) die(agora_strerror(status));
    return p;
}

static void phases(int64_t n)
{
    if (agora_nranks() != 2) die("phases needs 2 ranks");
    int me = agora_rank();
    volatile int64_t *x = alloc_placed(PAGE, AGORA_PLACE_RANK, 0);
    int64_t all[4][14];
    if (me == 0) *x = 0; /* phase 0 */
    agora_barrier();
    int64_t y = 0, phase3_flushes = 0;
    /* Each phase's events: from the end of the previous gather to the end
     * of the sync after the phase (a home's events happen before the
     * flushing rank's flush returns, so before it reaches the sync). */
    events_t t = events_now();
    if (me == 1) {
        for (int64_t i = 0; i < n; ++i)
            flush((const void *)x, 8);
        y = *x;
        for (int64_t i = 0; i < n; ++i)
            flush((const void *)x, 8);
    }
    sync_ranks();
    gather(events_minus(events_now(), t), all[1]);
    t = events_now();
    if (me == 0)
        for (int64_t i = 0; i < n; ++i) {
            *x = *x + 1;
            flush((const void *)x, 8);
        }
    sync_ranks();
    gather(events_minus(events_now(), t), all[2]);
    t = events_now();
    if (me == 1)
        while (*x == y) {
            flush((const void *)x, 8);
            ++phase3_flushes;
        }
    sync_ranks();
    gather(events_minus(events_now(), t), all[3]);
    int64_t check[2] = {me == 1 ? *x : n, phase3_flushes};
    if (agora_reduce(check, 2, AGORA_INT64, AGORA_SUM) != AGORA_OK) die("agora_reduce failed");
    if (check[0] != 2 * n) die("phase 3 did not see phase 2's value");
    if (me == 0) {
        printf("FLUSH_RESULT {\"bench\": \"phases\", \"protocol\": \"%s\", \"model\": \"%s\", \"n\": %lld, ",
               protocol(), model(), (long long)n);
        for (int p = 1; p <= 3; ++p) {
            char key[32];
            printf("\"phase%d\": {", p);
            snprintf(key, sizeof key, "home");
            print_events(key, all[p]);
            printf(", ");
            snprintf(key, sizeof key, "remote");
            print_events(key, all[p] + 7);
            printf("}, ");
        }
        printf("\"phase3_flushes\": %lld}\n", (long long)check[1]);
    }
    sync_ranks();
}

static void busywait(int64_t g, int wait)
{
    int n = agora_nranks(), me = agora_rank();
    if (n < 3) die("busywait needs at least 3 ranks (worker, page server, waiters)");
    size_t bytes = (size_t)g * (size_t)g * sizeof(double);
    double *a = alloc_placed(bytes, AGORA_PLACE_RANK, 1);
    double *b = alloc_placed(bytes, AGORA_PLACE_RANK, 1);
    volatile int64_t *go = alloc_placed(PAGE, AGORA_PLACE_RANK, 0);
    agora_barrier();
    events_t e0 = events_now();
    double seconds = 0, checksum = 0;
    int64_t spins = 0;
    if (me == 0) {
        double t0 = agora_wtime();
        for (int64_t i = 1; i < g - 1; ++i)
            for (int64_t j = 1; j < g - 1; ++j) {
                double v = 0.25 * (a[(i - 1) * g + j] + a[(i + 1) * g + j] + a[i * g + j - 1] + a[i * g + j + 1]) + 1.0;
                b[i * g + j] = v;
            }
        seconds = agora_wtime() - t0;
        checksum = b[(g / 2) * g + g / 2];
        *go = 1;
        flush((const void *)go, 8);
    } else if (me >= 2 && wait) {
        while (1) {
            flush((const void *)go, 8);
            if (*go) break;
            ++spins;
            if (wait == 2) usleep(20);
        }
    }
    sync_ranks();
    events_t e1 = events_now();
    events_t d = events_minus(e1, e0);
    int64_t *all = calloc(7 * (size_t)n, sizeof(int64_t));
    gather(d, all);
    int64_t total_spins = spins;
    if (agora_reduce(&total_spins, 1, AGORA_INT64, AGORA_SUM) != AGORA_OK) die("agora_reduce failed");
    if (me == 0) {
        if (checksum != 1.0) die("stencil result wrong");
        printf("FLUSH_RESULT {\"bench\": \"busywait\", \"protocol\": \"%s\", \"model\": \"%s\", \"g\": %lld, "
               "\"wait\": %d, \"ranks\": %d, \"seconds\": %.6f, \"pages\": %lld, \"waiter_spins\": %lld, ",
               protocol(), model(), (long long)g, wait, n, seconds, (long long)(2 * bytes / PAGE),
               (long long)total_spins);
        print_events("worker", all);
        printf("}\n");
    }
    free(all);
    agora_barrier();
}

static void pipeline(int64_t steps, int64_t work)
{
    int n = agora_nranks(), me = agora_rank();
    char *done_pages = alloc_placed((size_t)n * PAGE, AGORA_PLACE_CYCLIC, 0);
    char *val_pages = alloc_placed((size_t)n * PAGE, AGORA_PLACE_CYCLIC, 0);
#define DONE(r) ((volatile int64_t *)(done_pages + (size_t)(r)*PAGE))
#define VAL(r) ((volatile double *)(val_pages + (size_t)(((r) + 1) % n) * PAGE + 64 * (r)))
    agora_barrier();
    events_t e0 = events_now();
    double t0 = agora_wtime();
    double acc = me;
    for (int64_t s = 1; s <= steps; ++s) {
        if (me > 0) {
            while (1) {
                flush((const void *)DONE(me - 1), 8);
                if (*DONE(me - 1) >= s) break;
            }
            flush((const void *)VAL(me - 1), 8);
            acc += *VAL(me - 1);
        }
        for (int64_t k = 0; k < work; ++k)
            acc = acc * 0.999999 + 1e-9;
        if (me < n - 1)
            while (1) {
                flush((const void *)DONE(me + 1), 8);
                if (*DONE(me + 1) >= s - 1) break;
            }
        *VAL(me) = acc;
        flush((const void *)VAL(me), 8);
        *DONE(me) = s;
        flush((const void *)DONE(me), 8);
    }
    double seconds = agora_wtime() - t0;
    events_t d = events_minus(events_now(), e0);
#undef DONE
#undef VAL
    int64_t *all = calloc(7 * (size_t)n, sizeof(int64_t));
    gather(d, all);
    int64_t sum[7] = {0};
    for (int r = 0; r < n; ++r)
        for (int k = 0; k < 7; ++k)
            sum[k] += all[7 * r + k];
    double slowest = seconds; /* the time of the slowest rank */
    if (agora_reduce(&slowest, 1, AGORA_DOUBLE, AGORA_MAX) != AGORA_OK) die("agora_reduce failed");
    if (me == 0) {
        printf("FLUSH_RESULT {\"bench\": \"pipeline\", \"protocol\": \"%s\", \"model\": \"%s\", \"steps\": %lld, "
               "\"work\": %lld, \"ranks\": %d, \"seconds\": %.6f, ",
               protocol(), model(), (long long)steps, (long long)work, n, slowest);
        print_events("job", sum);
        printf("}\n");
    }
    free(all);
    agora_barrier();
}

int main(int argc, char **argv)
{
    if (agora_init(&argc, &argv) != AGORA_OK) return 1;
    if (argc < 2) die("usage: flush_bench phases N | busywait G WAIT | pipeline STEPS WORK");
    if (strcmp(argv[1], "phases") == 0 && argc == 3)
        phases(atoll(argv[2]));
    else if (strcmp(argv[1], "busywait") == 0 && argc == 4)
        busywait(atoll(argv[2]), atoi(argv[3]));
    else if (strcmp(argv[1], "pipeline") == 0 && argc == 4)
        pipeline(atoll(argv[2]), atoll(argv[3]));
    else
        die("usage: flush_bench phases N | busywait G WAIT | pipeline STEPS WORK");
    fflush(stdout);
    agora_finalize();
    return 0;
}
