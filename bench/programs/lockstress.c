/* lockstress -- random lock-protected updates to falsely shared words.
 *
 * An array of `pages` pages of 64-bit words guarded by `locks` locks: word i
 * belongs to lock i % locks, so every page holds words of every lock and
 * workers holding different locks write the same pages (false sharing across
 * ranks on top of the true sharing of each lock's words). Every worker does
 * `ops` operations: pick a lock and one of its words at random (a seeded
 * generator per worker), take the lock, read-modify-write the word (with
 * `work` steps of computation between the read and the write, so a broken
 * lock loses updates), release; every `every` operations all workers meet at
 * a barrier. This is the traffic that collapses when ranks outnumber cores
 * and waiting threads spin (see docs/service.md); the figure is the total
 * throughput, operations per second summed over workers.
 *
 * Usage: bench_lockstress [-o OPS] [-l LOCKS] [-g PAGES] [-k EVERY] [-w WORK] [-s SEED] [-p P]
 *   defaults 2000 operations per worker, 8 locks, 4 pages, a barrier every
 *   50 operations, no work inside the critical section, seed 1.
 * Figure: ops/s (all workers together).
 * Validation (every worker, after the kernel): every worker counts its
 * updates per word privately; the counts are summed over workers and every
 * word must hold exactly its count, and the counts must add up to
 * workers x ops: a lost or duplicated update anywhere makes the program exit 1. */
#include "shm.h"

struct config {
    long ops, locks, pages, every, work;
    uint64_t seed;
};

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID(), np = SHM_NPROCS();
    const size_t nwords = (size_t)cfg->pages * (SHM_PAGE_SIZE / sizeof(uint64_t));
    const size_t per_lock = nwords / (size_t)cfg->locks; /* words of each lock */

    volatile uint64_t *w = shm_alloc_or_die(nwords * sizeof(uint64_t), "words");
    SHM_LOCK_DECL(locks) = SHM_LOCK_ARRAY_CREATE((size_t)cfg->locks);
    int64_t *mine = calloc(nwords, sizeof *mine); /* this worker's updates per word */
    if (!mine) shm_die("lockstress: out of memory for %zu counters", nwords);
    SHM_BARRIER();

    uint64_t rng = shm_mix64(cfg->seed * 0x100000001b3ULL + (uint64_t)id);
    shm_kernel_begin();
    for (long op = 1; op <= cfg->ops; op++) {
        rng = shm_mix64(rng);
        size_t l = (size_t)(rng % (uint64_t)cfg->locks);
        size_t i = l + (size_t)cfg->locks * (size_t)((rng >> 32) % per_lock);
        SHM_LOCK(&locks[l]);
        uint64_t v = w[i];
        volatile double x = 1.0; /* the computation between read and write */
        for (long c = 0; c < cfg->work; c++)
            x = x * 1.0000001 + 1e-9;
        w[i] = v + 1;
        SHM_UNLOCK(&locks[l]);
        mine[i]++;
        if (op % cfg->every == 0) SHM_BARRIER();
    }
    double t = shm_kernel_end();

    /* every word must hold the sum of every worker's updates to it */
    SHM_REDUCE_SUM_INT64(mine, nwords);
    int64_t bad = 0, total = 0;
    for (size_t i = 0; i < nwords; i++) {
        total += mine[i];
        if (w[i] != (uint64_t)mine[i]) {
            if (bad == 0)
                fprintf(stderr,
                        "VALIDATION FAILED: lockstress: worker %d: word %zu (lock %zu) holds %llu, "
                        "expected %lld updates\n",
                        id, i, i % (size_t)cfg->locks, (unsigned long long)w[i], (long long)mine[i]);
            bad++;
        }
    }
    if (total != (int64_t)np * cfg->ops) {
        if (bad == 0)
            fprintf(stderr, "VALIDATION FAILED: lockstress: worker %d: %lld updates counted, expected %lld\n", id,
                    (long long)total, (long long)np * cfg->ops);
        bad++;
    }
    SHM_REDUCE_SUM_INT64(&bad, 1);
    int valid = bad == 0;
    free(mine);

    double ops_per_s = (double)np * (double)cfg->ops / t;
    if (id == 0) {
        if (!valid)
            fprintf(stderr, "VALIDATION FAILED: lockstress: %lld mismatches (summed over workers)\n", (long long)bad);
        printf("lockstress: ops=%ld per worker, locks=%ld pages=%ld barrier every %ld, workers=%d "
               "time=%.4f s %.0f ops/s (%.0f per worker)\n",
               cfg->ops, cfg->locks, cfg->pages, cfg->every, np, t, ops_per_s, ops_per_s / np);
    }
    char size[96];
    snprintf(size, sizeof size, "ops=%ld,locks=%ld,pages=%ld,k=%ld", cfg->ops, cfg->locks, cfg->pages, cfg->every);
    return shm_report("lockstress", "default", size, ops_per_s, "ops/s", t, cfg->ops, valid, NULL);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.ops = 2000, .locks = 8, .pages = 4, .every = 50, .work = 0, .seed = 1};
    const struct shm_option opts[] = {
        {"ops", "o", SHM_OPT_LONG, &cfg.ops, "O", "operations per worker", SHM_AT_LEAST(1)},
        {"locks", "l", SHM_OPT_LONG, &cfg.locks, "L", "locks", SHM_AT_LEAST(1)},
        {"pages", "g", SHM_OPT_LONG, &cfg.pages, "G", "shared pages", SHM_RANGE(1, 1L << 30)},
        {"every", "k", SHM_OPT_LONG, &cfg.every, "K", "a barrier every K operations", SHM_AT_LEAST(1)},
        {"work", "w", SHM_OPT_LONG, &cfg.work, "W", "steps of computation inside the critical section",
         SHM_AT_LEAST(0)},
        {"seed", "s", SHM_OPT_U64, &cfg.seed, "S", "random seed", SHM_ANY_VALUE},
        SHM_OPTIONS_END};
    int rc = shm_parse_options(argc, argv, opts, "Random lock-protected updates to falsely shared words.");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    long words = cfg.pages * (long)(SHM_PAGE_SIZE / sizeof(uint64_t));
    if (cfg.locks > words)
        return shm_usage("lockstress: %ld locks need at least %ld words; %ld pages hold %ld\n", cfg.locks, cfg.locks,
                         cfg.pages, words);
    return shm_run_and_finish(worker, &cfg);
}
