/* gptr_micro -- Themis's microbenchmark (section 3.2) over Agora's
 * global pointers.
 *
 * Every rank exposes an array of E = 1024 elements of W bits (8, 16, 32 or
 * 64), one agora_gptr_mem_alloc; the p x E elements are the global address
 * space. Each rank then performs 2 x p x E accesses, each one at random a
 * blocking read (agora_gptr_read) or an asynchronous write
 * (agora_gptr_write_async with a NULL signal, agora_gptr_sync at the end),
 * reads three times as likely as writes, over one of three patterns:
 *   sequential  every element of every rank in order, twice (rank r starts
 *               at its own array, then r+1, ..., wrapping: the staggered
 *               start of Split-C programs)
 *   random      a random (rank, index) every time
 *   wander      a random start; each step the same location (20%), the
 *               adjacent index on the same rank (60%, either side, wrapping)
 *               or the same index on the adjacent rank (20%, either side)
 * As in the paper, a barrier starts and ends the timed region (the end one
 * drains the buffered writes). Every element always holds one value (its
 * initial value, which is also what every write writes), so every read is
 * checked against it.
 *
 * Every (pattern, width) is run --reps times, each on a fresh allocation
 * (cold caches, no directory entries); the time of a repetition is the
 * slowest rank's. With --barriers N the program also times N barriers in a
 * row after each repetition (Themis figure 5: the cost of sweeping the
 * cache at a barrier).
 *
 * Usage: gptr_micro [--pattern sequential|random|wander|all] [--width 8|16|32|64|all]
 *                   [--reps R] [--seed S] [--elements E] [--barriers N] [--json PATH]
 * Output: one GPTR_RESULT line per (pattern, width); see bench/gptr/README
 * (docs/benchmarks.md, "Global-pointer benchmarks"). */
#include "gptr_bench.h"

enum { SEQUENTIAL, RANDOM, WANDER, NPATTERNS };
static const char *pattern_name[NPATTERNS] = {"sequential", "random", "wander"};

static const char usage[] = "usage: gptr_micro [--pattern sequential|random|wander|all] [--width 8|16|32|64|all]\n"
                            "                  [--reps R] [--seed S] [--elements E] [--barriers N] [--json PATH]\n"
                            "Themis's microbenchmark: 2*p*E reads (75%) and async writes (25%) per rank.\n";

/* The one value element `idx` of rank `home` holds at width `wb` bytes. */
static uint64_t value_of(int home, uint32_t idx, int wb)
{
    uint64_t v = gb_mix64(((uint64_t)home << 32 | idx) ^ 0x5eedULL);
    return wb == 8 ? v : v & ((1ull << (8 * wb)) - 1);
}

struct access {
    uint32_t rank, index;
    int write;
};

/* This rank's access sequence for one repetition (generated untimed). */
static void make_sequence(struct access *seq, size_t n, int pattern, int me, int p, uint32_t E, uint64_t seed)
{
    struct gb_rng rng = {gb_mix64(seed * 1000003ULL + (uint64_t)me * 7919ULL + (uint64_t)pattern)};
    size_t a = 0;
    if (pattern == SEQUENTIAL) {
        for (int pass = 0; pass < 2; pass++)
            for (int t = 0; t < p; t++)
                for (uint32_t i = 0; i < E; i++) {
                    seq[a].rank = (uint32_t)((me + t) % p);
                    seq[a].index = i;
                    a++;
                }
    } else if (pattern == RANDOM) {
        for (; a < n; a++) {
            seq[a].rank = (uint32_t)gb_below(&rng, (uint64_t)p);
            seq[a].index = (uint32_t)gb_below(&rng, E);
        }
    } else {
        uint32_t r = (uint32_t)gb_below(&rng, (uint64_t)p), i = (uint32_t)gb_below(&rng, E);
        for (; a < n; a++) {
            if (a > 0) {
                uint64_t u = gb_below(&rng, 10);
                int dir = gb_below(&rng, 2) ? 1 : -1;
                if (u < 2) {
                    /* the same location */
                } else if (u < 8) {
                    i = (uint32_t)(((int64_t)i + dir + E) % E);
                } else {
                    r = (uint32_t)(((int64_t)r + dir + p) % p);
                }
            }
            seq[a].rank = r;
            seq[a].index = i;
        }
    }
    /* read or write: reads three times as likely */
    for (a = 0; a < n; a++)
        seq[a].write = gb_below(&rng, 4) == 0;
}

int main(int argc, char **argv)
{
    GB_CHECK(agora_init(&argc, &argv));
    const int me = agora_rank(), p = agora_nranks();
    int patterns[NPATTERNS] = {1, 1, 1};
    int widths[4] = {1, 1, 1, 1}; /* 8 16 32 64 bits */
    long reps = 3, elements = 1024, barriers = 0;
    uint64_t seed = 1;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = gb_opt(argc, argv, &i, "--pattern"))) {
            if (strcmp(v, "all") != 0) {
                int k;
                for (k = 0; k < NPATTERNS && strcmp(v, pattern_name[k]) != 0; k++)
                    ;
                if (k == NPATTERNS) gb_usage_exit(usage, 2);
                memset(patterns, 0, sizeof patterns);
                patterns[k] = 1;
            }
        } else if ((v = gb_opt(argc, argv, &i, "--width"))) {
            if (strcmp(v, "all") != 0) {
                long w = gb_long("--width", v, 8, 64);
                int k = w == 8 ? 0 : w == 16 ? 1 : w == 32 ? 2 : w == 64 ? 3 : -1;
                if (k < 0) gb_usage_exit(usage, 2);
                memset(widths, 0, sizeof widths);
                widths[k] = 1;
            }
        } else if ((v = gb_opt(argc, argv, &i, "--reps")))
            reps = gb_long("--reps", v, 1, 1000);
        else if ((v = gb_opt(argc, argv, &i, "--seed")))
            seed = (uint64_t)gb_long("--seed", v, 0, INT32_MAX);
        else if ((v = gb_opt(argc, argv, &i, "--elements")))
            elements = gb_long("--elements", v, 1, 1 << 20);
        else if ((v = gb_opt(argc, argv, &i, "--barriers")))
            barriers = gb_long("--barriers", v, 0, 1 << 20);
        else
            gb_common_option(argc, argv, &i, &json, usage);
    }
    const uint32_t E = (uint32_t)elements;
    const size_t n = (size_t)2 * (size_t)p * E; /* accesses per rank */
    struct access *seq = malloc(n * sizeof *seq);
    uint64_t *wval = malloc(n * sizeof *wval); /* write values stay put until the sync */
    double *times = malloc((size_t)reps * sizeof *times), *btimes = malloc((size_t)reps * sizeof *btimes);
    if (!seq || !wval || !times || !btimes) gb_die("out of memory");
    struct gb_config cfg = gb_config();
    char cfgjson[256];
    gb_config_json(cfgjson, sizeof cfgjson, &cfg);
    int all_valid = 1;

    for (int pat = 0; pat < NPATTERNS; pat++) {
        if (!patterns[pat]) continue;
        for (int wk = 0; wk < 4; wk++) {
            if (!widths[wk]) continue;
            const int wb = 1 << wk; /* bytes */
            struct gb_counts total;
            memset(&total, 0, sizeof total);
            uint64_t bad = 0;
            for (long rep = 0; rep < reps; rep++) {
                agora_gptr_t base = gb_alloc((size_t)E * (size_t)wb, "the array");
                unsigned char *mine = agora_gptr_to_local(base);
                for (uint32_t i = 0; i < E; i++) {
                    uint64_t v = value_of(me, i, wb);
                    memcpy(mine + (size_t)i * wb, &v, (size_t)wb);
                }
                make_sequence(seq, n, pat, me, p, E, seed + (uint64_t)rep);
                for (size_t a = 0; a < n; a++)
                    wval[a] = value_of((int)seq[a].rank, seq[a].index, wb);
                uint64_t mismatches = 0;

                GB_CHECK(agora_barrier());
                struct gb_counts c0 = gb_snapshot();
                double t0 = agora_wtime();
                GB_CHECK(agora_barrier());
                for (size_t a = 0; a < n; a++) {
                    agora_gptr_t g = agora_gptr_make((int)seq[a].rank,
                                                     agora_gptr_offset(base) + (uint64_t)seq[a].index * (uint64_t)wb);
                    if (seq[a].write) {
                        GB_CHECK(agora_gptr_write_async(g, &wval[a], (size_t)wb, NULL));
                    } else {
                        uint64_t got = 0;
                        GB_CHECK(agora_gptr_read(g, &got, (size_t)wb));
                        mismatches += got != wval[a];
                    }
                }
                GB_CHECK(agora_gptr_sync());
                GB_CHECK(agora_barrier());
                double t1 = agora_wtime();
                struct gb_counts c1 = gb_snapshot();
                double bt = 0;
                if (barriers > 0) {
                    double b0 = agora_wtime();
                    for (long b = 0; b < barriers; b++)
                        GB_CHECK(agora_barrier());
                    bt = (agora_wtime() - b0) / (double)barriers;
                }
                struct gb_counts d = gb_delta_sum(&c0, &c1);
                gb_accumulate(&total, &d);
                int64_t mm = (int64_t)mismatches;
                GB_CHECK(agora_reduce(&mm, 1, AGORA_INT64, AGORA_SUM));
                bad += (uint64_t)mm;
                times[rep] = gb_max(t1 - t0) / (double)n * 1e6;
                btimes[rep] = gb_max(bt) * 1e6;
            }
            agora_gptr_stats_t tg = gb_gptr(&total);
            double t_med = gb_median(times, (int)reps);
            double accesses_all = (double)n * (double)p * (double)reps;
            int valid = bad == 0;
            all_valid &= valid;
            char cnt[1024], tl[2048], out[8192];
            gb_counts_json(cnt, sizeof cnt, &total);
            gb_array_json(tl, sizeof tl, times, reps < 100 ? (int)reps : 100, "%.4f"); /* at most 100 */
            int len = snprintf(out, sizeof out,
                               "{\"program\":\"gptr_micro\",%s,\"pattern\":\"%s\",\"width\":%d,\"ranks\":%d,"
                               "\"elements\":%u,\"accesses\":%zu,\"accesses_total\":%zu,\"reps\":%ld,\"seed\":%" PRIu64
                               ",\"time_per_access_us\":%.4f,\"time_per_access_us_reps\":%s,"
                               "\"requests_per_access\":%.4f,\"messages_per_access\":%.4f,"
                               "\"hit_rate\":%.4f,\"stalls_per_rep\":%.1f,\"misses_per_rep\":%.1f,"
                               "\"mismatches\":%" PRIu64 ",\"valid\":%s",
                               cfgjson, pattern_name[pat], 8 * wb, p, E, n, n * (size_t)p, reps, seed, t_med, tl,
                               (double)tg.requests / accesses_all, (double)gb_messages(&total) / accesses_all,
                               gb_hit_rate(&total), (double)tg.stalls / (double)reps, (double)tg.misses / (double)reps,
                               bad, valid ? "true" : "false");
            if (barriers > 0)
                len += snprintf(out + len, sizeof out - (size_t)len, ",\"barriers\":%ld,\"barrier_us\":%.3f", barriers,
                                gb_median(btimes, (int)reps));
            snprintf(out + len, sizeof out - (size_t)len, ",\"counters\":%s}", cnt);
            if (me == 0)
                printf(
                    "gptr_micro %-12s %-10s %2d-bit: %8.3f us/access  %.3f req/access  hit %.3f  stalls/rep %.0f%s\n",
                    cfg.scheme, pattern_name[pat], 8 * wb, t_med, (double)tg.requests / accesses_all,
                    gb_hit_rate(&total), (double)tg.stalls / (double)reps, valid ? "" : "  INVALID");
            gb_emit(json, out);
            if (!valid && me == 0)
                fprintf(stderr, "VALIDATION FAILED: %s %s %d-bit: %" PRIu64 " reads returned a wrong value\n",
                        cfg.scheme, pattern_name[pat], 8 * wb, bad);
        }
    }
    free(seq), free(wval), free(times), free(btimes);
    GB_CHECK(agora_finalize());
    return all_valid ? 0 : 1;
}
