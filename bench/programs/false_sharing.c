/* false_sharing -- workers update disjoint, interleaved words of shared pages.
 *
 * An array of `pages` pages of 64-bit words; worker w of P owns the words
 * w, w+P, w+2P, ... (so every page is written by every worker, but no word by
 * two) -- per-worker accumulators packed into shared pages, the classic false
 * sharing of SPLASH-style codes. Every iteration each worker updates each of
 * its words `rounds` times, page by page (so all workers are on all pages
 * at once), with `work` steps of computation before each update, then all
 * meet at a barrier; the last round stores a value derived from the
 * iteration. There is no true sharing at all: under a single-writer page
 * protocol such as `sc` the pages ping-pong between the ranks for as long as
 * the workers update them; a multiple-writer protocol (`hlrc`: twins and
 * diffs) moves each page's changes once per iteration. The headline figure
 * is bytes sent per iteration (the runner's KB/iter), next to the time.
 *
 * Usage: bench_false_sharing [-g PAGES] [-i ITERATIONS] [-r ROUNDS] [-w WORK] [-p P]
 *   defaults 16 pages, 100 iterations (plus one untimed warm-up), 4 rounds,
 *   100 steps of work per update (about 0.7 us here; -r 1 -w 0: one plain
 *   sweep of stores).
 * Figure: ms/iter.
 * Validation (every worker, after the kernel): every word holds the value of
 * the last iteration written by its owner, so a stale page or a lost write is
 * caught; any mismatch anywhere makes the program exit 1. */
#include "shm.h"

struct config {
    long pages, iters, rounds, work;
};

/* The value word i holds after iteration `it` (it >= 1): differs from every
 * other iteration's value and every other word's. */
static uint64_t value(long it, size_t i) { return ((uint64_t)it << 32) | (uint64_t)i; }

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID(), np = SHM_NPROCS();
    const size_t nwords = (size_t)cfg->pages * (SHM_PAGE_SIZE / sizeof(uint64_t));

    volatile uint64_t *w = shm_alloc_or_die(nwords * sizeof(uint64_t), "words");
    SHM_BARRIER();

    /* iteration 1 is the untimed warm-up; iterations 2..iters+1 are timed */
    const long last = cfg->iters + 1;
    for (size_t i = (size_t)id; i < nwords; i += (size_t)np)
        w[i] = value(1, i);
    shm_kernel_begin();
    const size_t per_page = SHM_PAGE_SIZE / sizeof(uint64_t);
    for (long it = 2; it <= last; it++) {
        for (long r = 1; r <= cfg->rounds; r++)
            for (size_t k = (size_t)id; k < per_page; k += (size_t)np)
                for (size_t p = 0; p < (size_t)cfg->pages; p++) {
                    volatile double x = 1.0; /* the computation behind an update */
                    for (long c = 0; c < cfg->work; c++)
                        x = x * 1.0000001 + 1e-9;
                    size_t i = p * per_page + k;
                    w[i] = r == cfg->rounds ? value(it, i) : value(it, i) + (uint64_t)r;
                }
        SHM_BARRIER();
    }
    double t = shm_kernel_end();

    /* every worker checks every word (reads all pages after the kernel) */
    int64_t bad = 0;
    for (size_t i = 0; i < nwords; i++) {
        uint64_t got = w[i];
        if (got != value(last, i)) {
            if (bad == 0)
                fprintf(stderr,
                        "VALIDATION FAILED: false_sharing: worker %d: word %zu (page %zu, owner %d) "
                        "holds iteration %llu word %llu, expected iteration %ld\n",
                        id, i, i * sizeof(uint64_t) / SHM_PAGE_SIZE, (int)(i % (size_t)np),
                        (unsigned long long)(got >> 32), (unsigned long long)(got & 0xffffffffu), last);
            bad++;
        }
    }
    SHM_REDUCE_SUM_INT64(&bad, 1);
    int valid = bad == 0;

    double st[SHM_NSTATS];
    shm_kernel_stats_total(st); /* zeros under pthreads */
    double per = 1.0 / (double)cfg->iters;
    if (id == 0) {
        if (!valid)
            fprintf(stderr, "VALIDATION FAILED: false_sharing: %lld stale words (summed over workers)\n",
                    (long long)bad);
        printf("false_sharing: pages=%ld words=%zu iterations=%ld workers=%d time=%.4f s "
               "%.4f ms/iter",
               cfg->pages, nwords, cfg->iters, np, t, 1e3 * t * per);
        if (strcmp(SHM_BACKEND, "agora") == 0)
            printf(" faults/iter=%.1f msgs/iter=%.1f bytes/iter=%.0f diff_bytes/iter=%.0f", (st[0] + st[1]) * per,
                   st[5] * per, st[6] * per, st[13] * per);
        printf("\n");
    }
    char size[64], extra[128];
    snprintf(size, sizeof size, "pages=%ld", cfg->pages);
    snprintf(extra, sizeof extra, "\"bytes_per_iter\":%.1f", st[6] * per);
    return shm_report("false_sharing", "default", size, 1e3 * t * per, "ms/iter", t, cfg->iters, valid, extra);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.pages = 16, .iters = 100, .rounds = 4, .work = 100};
    const struct shm_option opts[] = {
        {"pages", "g", SHM_OPT_LONG, &cfg.pages, "G", "shared pages", SHM_RANGE(1, 1L << 30)},
        {"iterations", "i", SHM_OPT_LONG, &cfg.iters, "I", "timed iterations", SHM_RANGE(1, (1L << 30) - 1)},
        {"rounds", "r", SHM_OPT_LONG, &cfg.rounds, "R", "updates of each word per iteration", SHM_AT_LEAST(1)},
        {"work", "w", SHM_OPT_LONG, &cfg.work, "W", "steps of computation before each update", SHM_AT_LEAST(0)},
        SHM_OPTIONS_END};
    int rc = shm_parse_options(argc, argv, opts,
                               "Workers update disjoint, interleaved words of shared pages (false sharing).");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    return shm_run_and_finish(worker, &cfg);
}
