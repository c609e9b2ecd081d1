/* cg -- naive conjugate gradient on a spread sparse matrix (Themis v0,
 * Themis).
 *
 * Solves A x = b for the 5-point Laplacian of a K x K grid plus a small
 * diagonal shift (n = K^2 rows, symmetric positive definite; the shift keeps
 * the condition number near 160 so that the residual falls steadily), stored in shared memory in ELLPACK form (5
 * column/value slots per row, unused slots have value 0). Matrix rows and
 * every vector are spread over the workers in blocks: each is its own
 * allocation, so under block placement worker r homes rows [lo, hi) of the
 * matrix and of x, r, p, q, b alike. As in Themis' naive version, all data are
 * accessed through plain global loads and stores: the matrix-vector product
 * reads the remote entries of p next to the band edges (rows i +- K) directly,
 * and the dot products are all-reduced.
 *
 * Usage: bench_cg [-n K] [-i ITERATIONS] [-p P]
 *   defaults K = 1024 (n = 1 Mi unknowns), 50 timed iterations after one
 *   untimed warm-up iteration.
 * Figure: ms per iteration.
 * Validation (worker 0): a serial CG in private memory for the same number of
 * iterations. Dot products are summed in a different order, so x must agree
 * to 1e-8 in relative 2-norm and the final residual norm to 1e-6 relative
 * (or 1e-12 of the initial residual once converged); the residual must also
 * have decreased. */
#include "shm.h"

#define W 5 /* ELLPACK slots per row */

struct config {
    size_t k;
    long iters;
};

static double rhs(size_t i) { return 1.0 + 0.1 * (double)(i % 7); }

static const double shift = 0.05;

/* Row i of the shifted Laplacian: 4 + shift on the diagonal, -1 to each grid
 * neighbour. */
static void make_row(size_t i, size_t k, int32_t *col, double *val)
{
    size_t gi = i / k, gj = i % k, s = 0;
    col[s] = (int32_t)i, val[s++] = 4.0 + shift;
    if (gi > 0) col[s] = (int32_t)(i - k), val[s++] = -1.0;
    if (gj > 0) col[s] = (int32_t)(i - 1), val[s++] = -1.0;
    if (gj + 1 < k) col[s] = (int32_t)(i + 1), val[s++] = -1.0;
    if (gi + 1 < k) col[s] = (int32_t)(i + k), val[s++] = -1.0;
    for (; s < W; s++)
        col[s] = (int32_t)i, val[s] = 0.0;
}

static void spmv(const int32_t *col, const double *val, const double *p, double *q, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++) {
        const int32_t *c = col + i * W;
        const double *v = val + i * W;
        double s = 0.0;
        for (int t = 0; t < W; t++)
            s += v[t] * p[c[t]];
        q[i] = s;
    }
}

static double dot(const double *a, const double *b, size_t lo, size_t hi)
{
    double s = 0.0;
    for (size_t i = lo; i < hi; i++)
        s += a[i] * b[i];
    return s;
}

/* Serial CG in private memory; returns x and the final r.r. */
static double serial_cg(size_t k, long iters, double **xout)
{
    size_t n = k * k;
    int32_t *col = malloc(n * W * sizeof *col);
    double *val = malloc(n * W * sizeof *val), *x = calloc(n, sizeof *x), *r = malloc(n * sizeof *r),
           *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q);
    if (!col || !val || !x || !r || !p || !q) shm_die("cg: out of memory for the serial check");
    for (size_t i = 0; i < n; i++) {
        make_row(i, k, col + i * W, val + i * W);
        r[i] = p[i] = rhs(i);
    }
    double rho = dot(r, r, 0, n);
    for (long it = 0; it < iters; it++) {
        spmv(col, val, p, q, 0, n);
        double alpha = rho / dot(p, q, 0, n);
        for (size_t i = 0; i < n; i++) {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        double rho_new = dot(r, r, 0, n), beta = rho_new / rho;
        rho = rho_new;
        for (size_t i = 0; i < n; i++)
            p[i] = r[i] + beta * p[i];
    }
    free(col), free(val), free(r), free(p), free(q);
    *xout = x;
    return rho;
}

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID();
    const size_t k = cfg->k, n = k * k;

    int32_t *col = shm_alloc_or_die(n * W * sizeof(int32_t), "matrix columns");
    double *val = shm_alloc_or_die(n * W * sizeof(double), "matrix values");
    double *x = shm_alloc_or_die(n * sizeof(double), "x");
    double *r = shm_alloc_or_die(n * sizeof(double), "r");
    double *p = shm_alloc_or_die(n * sizeof(double), "p");
    double *q = shm_alloc_or_die(n * sizeof(double), "q");

    size_t lo, hi;
    shm_owned_range(x, n, sizeof(double), id, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        make_row(i, k, col + i * W, val + i * W);
        x[i] = 0.0;
        r[i] = p[i] = rhs(i);
    }
    double rho = dot(r, r, lo, hi);
    SHM_REDUCE_SUM_DOUBLE(&rho, 1);
    const double rho0 = rho;
    SHM_BARRIER(); /* p complete before the first product */

    long total = cfg->iters + 1;
    for (long it = 0; it < total; it++) {
        if (it == 1) shm_kernel_begin();
        spmv(col, val, p, q, lo, hi);
        double pq = dot(p, q, lo, hi);
        /* everyone has finished reading p once this returns */
        SHM_REDUCE_SUM_DOUBLE(&pq, 1);
        double alpha = rho / pq;
        for (size_t i = lo; i < hi; i++) {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        double rho_new = dot(r, r, lo, hi);
        SHM_REDUCE_SUM_DOUBLE(&rho_new, 1);
        double beta = rho_new / rho;
        rho = rho_new;
        for (size_t i = lo; i < hi; i++)
            p[i] = r[i] + beta * p[i];
        SHM_BARRIER(); /* new p visible before the next product */
    }
    double t = shm_kernel_end();

    int valid = 1;
    if (id == 0) {
        double *ref;
        double ref_rho = serial_cg(k, total, &ref);
        double num = 0.0, den = 0.0;
        for (size_t i = 0; i < n; i++) {
            num += (x[i] - ref[i]) * (x[i] - ref[i]);
            den += ref[i] * ref[i];
        }
        double xerr = sqrt(num / (den > 0 ? den : 1.0));
        if (!(xerr <= 1e-8)) {
            fprintf(stderr,
                    "VALIDATION FAILED: cg: x differs from the serial solution by %.3e "
                    "(relative 2-norm, limit 1e-8)\n",
                    xerr);
            valid = 0;
        }
        /* relative, except once CG has converged to rounding level */
        double rn = sqrt(rho), rr = sqrt(ref_rho);
        if (valid && fabs(rn - rr) > 1e-6 * rr + 1e-12 * sqrt(rho0)) {
            fprintf(stderr, "VALIDATION FAILED: cg: residual norm %.17g, serial %.17g\n", rn, rr);
            valid = 0;
        }
        if (valid && !(rho < rho0)) {
            fprintf(stderr, "VALIDATION FAILED: cg: residual did not decrease (%.3e -> %.3e)\n", sqrt(rho0), sqrt(rho));
            valid = 0;
        }
        free(ref);
        printf("cg: K=%zu n=%zu iterations=%ld workers=%d |r0|=%.6e |r|=%.6e x-diff=%.2e "
               "time/iter=%.4f ms\n",
               k, n, cfg->iters, SHM_NPROCS(), sqrt(rho0), sqrt(rho), xerr, 1e3 * t / (double)cfg->iters);
    }
    char size[64];
    snprintf(size, sizeof size, "K=%zu", k);
    return shm_report("cg", "default", size, 1e3 * t / (double)cfg->iters, "ms/iter", t, cfg->iters, valid, NULL);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.k = 1024, .iters = 50};
    const struct shm_option opts[] = {
        {"size", "n", SHM_OPT_SIZE, &cfg.k, "K", "grid side; n = K^2 unknowns", SHM_RANGE(2, 40000)},
        {"iterations", "i", SHM_OPT_LONG, &cfg.iters, "I", "timed iterations", SHM_AT_LEAST(1)},
        SHM_OPTIONS_END};
    int rc = shm_parse_options(argc, argv, opts, "Naive conjugate gradient on a K x K grid's Laplacian (Themis).");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    return shm_run_and_finish(worker, &cfg);
}
