/* em3d -- electromagnetic wave propagation on a random bipartite graph
 * (Split-C EM3D as used in SWCC Split-C).
 *
 * Every worker owns `nodes` E nodes and `nodes` H nodes. Each node depends on
 * `degree` nodes of the other kind: with probability `remote` a dependency is
 * on a node owned by a worker at most `span` workers away (either direction,
 * wrapping around), otherwise on one of the worker's own nodes. An iteration
 * updates all E nodes from their H dependencies, then (after a barrier) all H
 * nodes from their E dependencies:
 *     e[i] -= sum_j coef[i][j] * h[dep[i][j]]
 * Each worker writes only its own nodes, so the only communication is the
 * remote reads (SWCC Split-C: "there are no remote writes in the main loop").
 *
 * Node values, dependency lists and coefficients are separate allocations, so
 * under block placement worker r homes the values and lists of its own nodes;
 * a node's owner is the worker homing its value. The graph is built by the
 * owners from a per-node hash, so it is reproducible.
 *
 * Usage: bench_em3d [-n NODES_PER_WORKER] [-d DEGREE] [-r REMOTE_PROBABILITY]
 *                   [-s SPAN] [-i ITERATIONS] [-p P]
 *   defaults 100000 nodes per worker, degree 20, remote 0.1, span 1 (as in
 *   SWCC Split-C's measurements), 50 timed iterations after one untimed warm-up.
 *   NB: the problem grows with the number of workers (weak scaling, as in the
 *   paper).
 * Figure: ms per iteration.
 * Validation (worker 0): a serial run over the same graph in private memory;
 * every node value must agree to 1e-12 relative (each sum is taken in the
 * same order, so they should agree exactly). */
#include "shm.h"

struct config {
    size_t nodes;
    int degree, span;
    double remote;
    long iters;
    uint64_t seed;
};

static double init_value(int kind, size_t i) { return shm_u01(shm_mix64(((uint64_t)kind << 40) + i)) + 0.5; }

/* Update nodes [lo, hi) of `dst` from `src` through their dependency lists. */
static void compute(double *dst, const double *src, const int32_t *dep, const double *coef, size_t lo, size_t hi, int d)
{
    for (size_t i = lo; i < hi; i++) {
        double v = dst[i];
        const int32_t *di = dep + i * (size_t)d;
        const double *ci = coef + i * (size_t)d;
        for (int j = 0; j < d; j++)
            v -= ci[j] * src[di[j]];
        dst[i] = v;
    }
}

/* Build the dependency lists of nodes [lo, hi) (of kind `kind`, owned by
 * worker `me`); `range` holds every worker's node range. */
static void build(int kind, int me, int np, const size_t (*range)[2], size_t lo, size_t hi, const struct config *cfg,
                  int32_t *dep, double *coef)
{
    const int d = cfg->degree;
    for (size_t i = lo; i < hi; i++) {
        for (int j = 0; j < d; j++) {
            uint64_t h0 = shm_mix64(cfg->seed ^ (((uint64_t)kind << 60) + i * (uint64_t)d + (uint64_t)j));
            uint64_t h1 = shm_mix64(h0), h2 = shm_mix64(h1), h3 = shm_mix64(h2);
            int owner = me;
            if (np > 1 && shm_u01(h0) < cfg->remote) {
                int dist = 1 + (int)(h1 % (uint64_t)cfg->span);
                int dir = (h1 >> 32) & 1 ? 1 : -1;
                owner = ((me + dir * dist) % np + np) % np;
            }
            size_t olo = range[owner][0], ohi = range[owner][1];
            if (ohi == olo) { /* that worker homes no nodes: fall back to our own */
                olo = range[me][0];
                ohi = range[me][1];
            }
            dep[i * (size_t)d + (size_t)j] = (int32_t)(olo + h2 % (ohi - olo));
            coef[i * (size_t)d + (size_t)j] = (shm_u01(h3) - 0.5) / (double)d;
        }
    }
}

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID(), np = SHM_NPROCS();
    const size_t n = cfg->nodes * (size_t)np; /* total nodes of each kind */
    const int d = cfg->degree;

    double *e = shm_alloc_or_die(n * sizeof(double), "E values");
    double *h = shm_alloc_or_die(n * sizeof(double), "H values");
    int32_t *edep = shm_alloc_or_die(n * (size_t)d * sizeof(int32_t), "E dependencies");
    double *ecoef = shm_alloc_or_die(n * (size_t)d * sizeof(double), "E coefficients");
    int32_t *hdep = shm_alloc_or_die(n * (size_t)d * sizeof(int32_t), "H dependencies");
    double *hcoef = shm_alloc_or_die(n * (size_t)d * sizeof(double), "H coefficients");

    size_t(*range)[2] = malloc((size_t)np * sizeof *range);
    if (!range) shm_die("em3d: out of memory");
    for (int r = 0; r < np; r++)
        shm_owned_range(e, n, sizeof(double), r, &range[r][0], &range[r][1]);
    const size_t lo = range[id][0], hi = range[id][1];
    for (size_t i = lo; i < hi; i++) {
        e[i] = init_value(0, i);
        h[i] = init_value(1, i);
    }
    build(0, id, np, (const size_t(*)[2])range, lo, hi, cfg, edep, ecoef);
    build(1, id, np, (const size_t(*)[2])range, lo, hi, cfg, hdep, hcoef);
    SHM_BARRIER();

    long total = cfg->iters + 1;
    for (long it = 0; it < total; it++) {
        if (it == 1) shm_kernel_begin();
        compute(e, h, edep, ecoef, lo, hi, d);
        SHM_BARRIER();
        compute(h, e, hdep, hcoef, lo, hi, d);
        SHM_BARRIER();
    }
    double t = shm_kernel_end();

    int valid = 1;
    if (id == 0) {
        /* serial replay over the same graph (read from the shared lists) */
        double *re = malloc(n * sizeof *re), *rh = malloc(n * sizeof *rh);
        if (!re || !rh) shm_die("em3d: out of memory for the serial check");
        for (size_t i = 0; i < n; i++) {
            re[i] = init_value(0, i);
            rh[i] = init_value(1, i);
        }
        for (long it = 0; it < total; it++) {
            compute(re, rh, edep, ecoef, 0, n, d);
            compute(rh, re, hdep, hcoef, 0, n, d);
        }
        valid = shm_check_array("em3d E values", e, re, n, 1e-12, 1e-300) &&
                shm_check_array("em3d H values", h, rh, n, 1e-12, 1e-300);
        /* count the remote dependencies actually generated, for the record */
        size_t remote = 0;
        for (int r = 0; r < np; r++)
            for (size_t i = range[r][0]; i < range[r][1]; i++)
                for (int j = 0; j < d; j++) {
                    size_t t2 = (size_t)edep[i * (size_t)d + (size_t)j];
                    remote += t2 < range[r][0] || t2 >= range[r][1];
                }
        printf("em3d: nodes/worker=%zu degree=%d remote=%.3f (actual %.3f) span=%d iterations=%ld "
               "workers=%d time/iter=%.4f ms\n",
               cfg->nodes, d, cfg->remote, (double)remote / (double)(n * (size_t)d), cfg->span, cfg->iters, np,
               1e3 * t / (double)cfg->iters);
        free(re), free(rh);
    }
    free(range);
    char size[96];
    snprintf(size, sizeof size, "n=%zu/worker,d=%d,r=%g,s=%d", cfg->nodes, d, cfg->remote, cfg->span);
    return shm_report("em3d", "default", size, 1e3 * t / (double)cfg->iters, "ms/iter", t, cfg->iters, valid,
                      "\"weak_scaling\":true");
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.nodes = 100000, .degree = 20, .span = 1, .remote = 0.1, .iters = 50, .seed = 12345};
    const struct shm_option opts[] = {
        {"nodes", "n", SHM_OPT_SIZE, &cfg.nodes, "N", "E and H nodes per worker (weak scaling)",
         SHM_RANGE(1, INT32_MAX)},
        {"degree", "d", SHM_OPT_INT, &cfg.degree, "D", "dependencies per node", SHM_RANGE(1, 65536)},
        {"remote", "r", SHM_OPT_DOUBLE, &cfg.remote, "P", "probability that a dependency is remote", SHM_RANGE(0, 1)},
        {"span", "s", SHM_OPT_INT, &cfg.span, "S", "how many workers away a remote dependency may be", SHM_AT_LEAST(1)},
        {"iterations", "i", SHM_OPT_LONG, &cfg.iters, "I", "timed iterations", SHM_AT_LEAST(1)},
        SHM_OPTIONS_END};
    int rc = shm_parse_options(argc, argv, opts, "EM3D wave propagation on a random bipartite graph (SWCC Split-C).");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    if (cfg.nodes > (size_t)INT32_MAX / (size_t)SHM_NPROCS())
        return shm_usage("em3d: %zu nodes per worker x %d workers exceed %d nodes\n", cfg.nodes, SHM_NPROCS(),
                         INT32_MAX);
    return shm_run_and_finish(worker, &cfg);
}
