/* gptr_em3d -- SWCC Split-C's EM3D (section 3.3) with explicit global pointers.
 *
 * Every rank owns `nodes` E nodes and `nodes` H nodes; each node depends on
 * `degree` nodes of the other kind, remote with probability `remote`, on a
 * rank at most `span` ranks away. The graph is bench_em3d's, bit for bit
 * (bench/programs/em3d.c, the same per-node hashes and seed), when that
 * program's block placement gives every worker exactly `nodes` nodes (nodes
 * a multiple of 512: whole pages of doubles), so the two programs compute
 * the same thing and their times compare.
 *
 * The node values are two spread arrays (E and H, `nodes` doubles per
 * rank); a dependency is a global pointer (kept with its coefficient in the
 * rank's private memory, as Split-C's node structs hold them). The main
 * loop is the paper's:
 *     compute_e: e[i] -= sum_j coef[i][j] * *h_dep[i][j]   (one agora_gptr_read each)
 *     barrier
 *     compute_h: the same for H from E
 *     barrier
 * Every value a rank reads, its own nodes' too, is one agora_gptr_read; it
 * writes its own node values with agora_gptr_write (so a home's write under
 * swcc invalidates the copies other ranks read in the previous phase).
 * One untimed warm-up iteration, then --iterations timed ones (the figure:
 * their mean time, as bench_em3d's).
 *
 * Validation: rank 0 rebuilds the whole graph in private memory, replays
 * the iterations serially and compares every value (fetched with
 * agora_gptr_get) exactly (every sum is taken in the same order). A checksum
 * of the values is printed (equal across schemes).
 *
 * Usage: gptr_em3d [-n NODES_PER_RANK] [-d DEGREE] [-r REMOTE] [-s SPAN]
 *                  [-i ITERATIONS] [--seed S] [--no-verify] [--json PATH]
 *   defaults 10240 nodes per rank, degree 20, remote 0.1, span 1, 10
 *   iterations, seed 12345 (bench_em3d's seed). */
#include "gptr_bench.h"

struct config {
    size_t nodes;
    int degree, span;
    double remote;
    long iters;
    uint64_t seed;
};

static double init_value(int kind, size_t i) { return gb_u01(gb_mix64(((uint64_t)kind << 40) + i)) + 0.5; }

/* bench_em3d's build(): the dependencies of the nodes [lo, hi) of kind
 * `kind` owned by rank `me`, as global node numbers; rank r owns
 * [r*nodes, (r+1)*nodes). */
static void build(int kind, int me, int np, size_t lo, size_t hi, const struct config *cfg, int32_t *dep, double *coef)
{
    const int d = cfg->degree;
    for (size_t i = lo; i < hi; i++) {
        for (int j = 0; j < d; j++) {
            uint64_t h0 = gb_mix64(cfg->seed ^ (((uint64_t)kind << 60) + i * (uint64_t)d + (uint64_t)j));
            uint64_t h1 = gb_mix64(h0), h2 = gb_mix64(h1), h3 = gb_mix64(h2);
            int owner = me;
            if (np > 1 && gb_u01(h0) < cfg->remote) {
                int dist = 1 + (int)(h1 % (uint64_t)cfg->span);
                int dir = (h1 >> 32) & 1 ? 1 : -1;
                owner = ((me + dir * dist) % np + np) % np;
            }
            size_t olo = (size_t)owner * cfg->nodes, ohi = olo + cfg->nodes;
            dep[(i - lo) * (size_t)d + (size_t)j] = (int32_t)(olo + h2 % (ohi - olo));
            coef[(i - lo) * (size_t)d + (size_t)j] = (gb_u01(h3) - 0.5) / (double)d;
        }
    }
}

/* Serial update of nodes [0, n) of dst from src (bench_em3d's compute()). */
static void compute_serial(double *dst, const double *src, const int32_t *dep, const double *coef, size_t n, int d)
{
    for (size_t i = 0; i < n; i++) {
        double v = dst[i];
        for (int j = 0; j < d; j++)
            v -= coef[i * (size_t)d + (size_t)j] * src[dep[i * (size_t)d + (size_t)j]];
        dst[i] = v;
    }
}

/* This rank's nodes of one kind: dst[i] -= sum coef * *src_ptr, all through
 * global pointers. */
static void compute(agora_gptr_t dst, const agora_gptr_t *srcp, const double *coef, size_t nodes, int d)
{
    for (size_t i = 0; i < nodes; i++) {
        agora_gptr_t me = agora_gptr_add(dst, (int64_t)(i * sizeof(double)));
        double v;
        GB_CHECK(agora_gptr_read(me, &v, sizeof v));
        const agora_gptr_t *sp = srcp + i * (size_t)d;
        const double *ci = coef + i * (size_t)d;
        for (int j = 0; j < d; j++) {
            double x;
            GB_CHECK(agora_gptr_read(sp[j], &x, sizeof x));
            v -= ci[j] * x;
        }
        GB_CHECK(agora_gptr_write(me, &v, sizeof v));
    }
}

static const char usage[] = "usage: gptr_em3d [-n NODES_PER_RANK] [-d DEGREE] [-r REMOTE] [-s SPAN] [-i ITERATIONS]\n"
                            "                 [--seed S] [--no-verify] [--json PATH]\n"
                            "SWCC Split-C's EM3D with global pointers (the graph of bench_em3d).\n";

int main(int argc, char **argv)
{
    GB_CHECK(agora_init(&argc, &argv));
    const int me = agora_rank(), np = agora_nranks();
    struct config cfg = {.nodes = 10240, .degree = 20, .span = 1, .remote = 0.1, .iters = 10, .seed = 12345};
    int verify = 1;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = gb_opt(argc, argv, &i, "-n")) || (v = gb_opt(argc, argv, &i, "--nodes")))
            cfg.nodes = (size_t)gb_long("-n", v, 1, INT32_MAX);
        else if ((v = gb_opt(argc, argv, &i, "-d")) || (v = gb_opt(argc, argv, &i, "--degree")))
            cfg.degree = (int)gb_long("-d", v, 1, 65536);
        else if ((v = gb_opt(argc, argv, &i, "-r")) || (v = gb_opt(argc, argv, &i, "--remote")))
            cfg.remote = gb_double("-r", v, 0, 1);
        else if ((v = gb_opt(argc, argv, &i, "-s")) || (v = gb_opt(argc, argv, &i, "--span")))
            cfg.span = (int)gb_long("-s", v, 1, 1 << 20);
        else if ((v = gb_opt(argc, argv, &i, "-i")) || (v = gb_opt(argc, argv, &i, "--iterations")))
            cfg.iters = gb_long("-i", v, 1, 1 << 20);
        else if ((v = gb_opt(argc, argv, &i, "--seed")))
            cfg.seed = (uint64_t)gb_long("--seed", v, 0, INT32_MAX);
        else if (!strcmp(argv[i], "--no-verify"))
            verify = 0;
        else
            gb_common_option(argc, argv, &i, &json, usage);
    }
    if (cfg.nodes > (size_t)INT32_MAX / (size_t)np) {
        if (me == 0)
            fprintf(stderr, "gptr_em3d: %zu nodes per rank x %d ranks exceed %d nodes\n", cfg.nodes, np, INT32_MAX);
        agora_finalize();
        return 2;
    }
    const size_t nodes = cfg.nodes, n = nodes * (size_t)np;
    const int d = cfg.degree;
    agora_gptr_t e = gb_alloc(nodes * sizeof(double), "E values");
    agora_gptr_t h = gb_alloc(nodes * sizeof(double), "H values");
    const size_t lo = (size_t)me * nodes, hi = lo + nodes;
    double *le = agora_gptr_to_local(e), *lh = agora_gptr_to_local(h);
    for (size_t i = lo; i < hi; i++) {
        le[i - lo] = init_value(0, i);
        lh[i - lo] = init_value(1, i);
    }
    /* the graph, with dependencies turned into global pointers */
    int32_t *dep = malloc(nodes * (size_t)d * sizeof *dep);
    double *ecoef = malloc(nodes * (size_t)d * sizeof *ecoef), *hcoef = malloc(nodes * (size_t)d * sizeof *hcoef);
    agora_gptr_t *edep = malloc(nodes * (size_t)d * sizeof *edep), *hdep = malloc(nodes * (size_t)d * sizeof *hdep);
    if (!dep || !ecoef || !hcoef || !edep || !hdep) gb_die("out of memory for the graph");
    size_t remote = 0;
    for (int kind = 0; kind < 2; kind++) {
        build(kind, me, np, lo, hi, &cfg, dep, kind ? hcoef : ecoef);
        agora_gptr_t src = kind ? e : h; /* E nodes read H values, H nodes read E values */
        agora_gptr_t *out = kind ? hdep : edep;
        for (size_t k = 0; k < nodes * (size_t)d; k++) {
            size_t g = (size_t)dep[k];
            int owner = (int)(g / nodes);
            remote += kind == 0 && owner != me;
            out[k] = agora_gptr_make(owner, agora_gptr_offset(src) + (g % nodes) * sizeof(double));
        }
    }
    free(dep);
    int64_t remote_all = (int64_t)remote;
    GB_CHECK(agora_reduce(&remote_all, 1, AGORA_INT64, AGORA_SUM));
    struct gb_config gc = gb_config();
    GB_CHECK(agora_barrier());

    long total = cfg.iters + 1;
    double *t;
    struct gb_counts *cs;
    gb_timing_buffers(total, &t, &cs);
    for (long it = 0; it < total; it++) {
        GB_CHECK(agora_barrier());
        cs[it] = gb_snapshot();
        double t0 = agora_wtime();
        compute(e, edep, ecoef, nodes, d);
        GB_CHECK(agora_barrier());
        compute(h, hdep, hcoef, nodes, d);
        GB_CHECK(agora_barrier());
        t[it] = agora_wtime() - t0;
    }
    cs[total] = gb_snapshot();
    gb_max_each(t, total);

    /* every value, on rank 0; the checksum */
    int valid = 1;
    double checksum = 0;
    double *ge = NULL, *gh = NULL;
    if (me == 0) {
        ge = malloc(n * sizeof *ge), gh = malloc(n * sizeof *gh);
        if (!ge || !gh) gb_die("out of memory for the check");
        for (int r = 0; r < np; r++) {
            GB_CHECK(agora_gptr_get(ge + (size_t)r * nodes, agora_gptr_on(e, r), nodes * sizeof(double)));
            GB_CHECK(agora_gptr_get(gh + (size_t)r * nodes, agora_gptr_on(h, r), nodes * sizeof(double)));
        }
        for (size_t i = 0; i < n; i++)
            checksum += ge[i] + gh[i];
        if (verify) {
            double *re = malloc(n * sizeof *re), *rh = malloc(n * sizeof *rh);
            int32_t *sedep = malloc(n * (size_t)d * sizeof *sedep), *shdep = malloc(n * (size_t)d * sizeof *shdep);
            double *sec = malloc(n * (size_t)d * sizeof *sec), *shc = malloc(n * (size_t)d * sizeof *shc);
            if (!re || !rh || !sedep || !shdep || !sec || !shc) gb_die("out of memory for the serial check");
            for (int r = 0; r < np; r++) {
                size_t off = (size_t)r * nodes * (size_t)d;
                build(0, r, np, (size_t)r * nodes, (size_t)(r + 1) * nodes, &cfg, sedep + off, sec + off);
                build(1, r, np, (size_t)r * nodes, (size_t)(r + 1) * nodes, &cfg, shdep + off, shc + off);
            }
            for (size_t i = 0; i < n; i++) {
                re[i] = init_value(0, i);
                rh[i] = init_value(1, i);
            }
            for (long it = 0; it < total; it++) {
                compute_serial(re, rh, sedep, sec, n, d);
                compute_serial(rh, re, shdep, shc, n, d);
            }
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                if (ge[i] != re[i] || gh[i] != rh[i]) {
                    if (bad < 5)
                        fprintf(stderr, "gptr_em3d: node %zu: E %.17g (serial %.17g), H %.17g (serial %.17g)\n", i,
                                ge[i], re[i], gh[i], rh[i]);
                    bad++;
                }
            }
            valid = bad == 0;
            if (!valid)
                fprintf(stderr, "VALIDATION FAILED: gptr_em3d %s: %zu of %zu nodes differ from the serial run\n",
                        gc.scheme, bad, n);
            free(re), free(rh), free(sedep), free(shdep), free(sec), free(shc);
        }
        free(ge), free(gh);
    }
    valid = gb_all(valid);

    struct gb_counts cold = gb_delta_sum(&cs[0], &cs[1]), warm = gb_delta_sum(&cs[1], &cs[total]);
    double mean = gb_timed_mean(t, total);
    agora_gptr_stats_t wg = gb_gptr(&warm), cg = gb_gptr(&cold);
    char cfgjson[256], ccold[1024], cwarm[1024], tl[2048], out[8192];
    gb_config_json(cfgjson, sizeof cfgjson, &gc);
    gb_counts_json(ccold, sizeof ccold, &cold);
    gb_counts_json(cwarm, sizeof cwarm, &warm);
    gb_array_json(tl, sizeof tl, t + 1, cfg.iters < 100 ? (int)cfg.iters : 100, "%.6f"); /* at most 100 */
    double actual = (double)remote_all / (double)(n * (size_t)d);
    snprintf(out, sizeof out,
             "{\"program\":\"gptr_em3d\",%s,\"ranks\":%d,\"nodes_per_rank\":%zu,\"degree\":%d,\"remote\":%g,"
             "\"remote_actual\":%.4f,\"span\":%d,\"iterations\":%ld,\"time_per_iter_ms\":%.4f,"
             "\"time_per_iter_ms_median\":%.4f,\"time_per_iter_s_all\":%s,\"first_iter_ms\":%.4f,"
             "\"hit_rate\":%.6f,\"misses_per_iter\":%.1f,\"requests_per_iter\":%.1f,\"nacks_per_iter\":%.1f,"
             "\"first_iter_misses\":%" PRIu64 ",\"checksum\":%.17g,\"verified\":%s,\"valid\":%s,"
             "\"counters_first_iter\":%s,\"counters_timed\":%s}",
             cfgjson, np, nodes, d, cfg.remote, actual, cfg.span, cfg.iters, 1e3 * mean,
             1e3 * gb_median(t + 1, (int)cfg.iters), tl, 1e3 * t[0], gb_hit_rate(&warm),
             (double)wg.misses / (double)cfg.iters, (double)wg.requests / (double)cfg.iters,
             (double)wg.nacks / (double)cfg.iters, cg.misses, checksum, verify ? "true" : "false",
             valid ? "true" : "false", ccold, cwarm);
    if (me == 0)
        printf("gptr_em3d %s: nodes/rank=%zu degree=%d remote=%.3f (actual %.3f) span=%d ranks=%d: first %.3f ms, "
               "then %.4f ms/iter (hit %.4f, %.0f misses/iter, %.0f requests/iter) checksum %.17g%s\n",
               gc.scheme, nodes, d, cfg.remote, actual, cfg.span, np, 1e3 * t[0], 1e3 * mean, gb_hit_rate(&warm),
               (double)wg.misses / (double)cfg.iters, (double)wg.requests / (double)cfg.iters, checksum,
               valid ? "" : "  INVALID");
    gb_emit(json, out);
    free(t), free(cs), free(ecoef), free(hcoef), free(edep), free(hdep);
    GB_CHECK(agora_finalize());
    return valid ? 0 : 1;
}
