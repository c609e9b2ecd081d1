/* jacobi -- Helmholtz finite-difference Jacobi solver (OmpSCR c_jacobi01, as
 * ported to threads in Samhita/RegC).
 *
 * Solves (d2/dx2 + d2/dy2 - alpha) u = f on [-1,1]^2 with a 5-point stencil;
 * each iteration copies u to uold and relaxes every interior point from uold.
 * The global residual sum of squares is combined either
 *   --variant lock    under a mutex into a shared accumulator (Samhita/RegC's
 *                     pthreads code; needs a second barrier to read it), or
 *   --variant reduce  with an all-reduce (Samhita/RegC's reduction extension).
 *
 * Rows are decomposed owner-computes: every array is its own allocation, so
 * under block placement worker r homes the same r-th band of rows of u, uold
 * and f, and only the rows next to a band edge are read remotely.
 *
 * Usage: bench_jacobi [-n N] [-i ITERATIONS] [--variant lock|reduce] [-p P]
 *   N x N grid (default 2048), ITERATIONS timed iterations (default 50) after
 *   one untimed warm-up iteration.
 * Figure: ms per iteration.
 * Validation (worker 0): a serial run of the same iterations in private
 * memory; u must match element-wise (each point is computed by the same
 * expression, so to rounding-free precision) and the final residual to a
 * relative 1e-9 (summation order differs between workers). */
#include "shm.h"

struct config {
    size_t n;
    long iters;
    int use_lock;
};

static const double alpha = 0.0543; /* Helmholtz constant (OmpSCR) */
static const double omega = 1.0;    /* relaxation factor (OmpSCR) */

/* Right-hand side for the exact solution u = (1-x^2)(1-y^2). */
static double rhs(size_t i, size_t j, double dx, double dy)
{
    double x = -1.0 + dx * (double)i, y = -1.0 + dy * (double)j;
    return -alpha * (1.0 - x * x) * (1.0 - y * y) - 2.0 * (1.0 - x * x) - 2.0 * (1.0 - y * y);
}

/* One Jacobi sweep over interior rows [r0, r1); returns the sum of squared
 * residuals. Shared by the parallel kernel and the serial check so that both
 * evaluate exactly the same expression per point. */
static double sweep(double *u, const double *uold, const double *f, size_t n, size_t r0, size_t r1, double ax,
                    double ay, double b)
{
    double err = 0.0;
    for (size_t i = r0; i < r1; i++) {
        const double *up = uold + (i - 1) * n, *uc = uold + i * n, *dn = uold + (i + 1) * n;
        const double *fr = f + i * n;
        double *ur = u + i * n;
        for (size_t j = 1; j + 1 < n; j++) {
            double resid = (ax * (up[j] + dn[j]) + ay * (uc[j - 1] + uc[j + 1]) + b * uc[j] - fr[j]) / b;
            ur[j] = uc[j] - omega * resid;
            err += resid * resid;
        }
    }
    return err;
}

/* Serial reference on worker 0: returns u after iters iterations in *out and
 * the last residual. */
static double serial_jacobi(size_t n, long iters, double **out)
{
    double dx = 2.0 / (double)(n - 1), dy = dx;
    double ax = 1.0 / (dx * dx), ay = 1.0 / (dy * dy), b = -2.0 / (dx * dx) - 2.0 / (dy * dy) - alpha;
    double *u = calloc(n * n, sizeof *u), *uo = calloc(n * n, sizeof *uo), *f = malloc(n * n * sizeof *f);
    if (!u || !uo || !f) shm_die("jacobi: out of memory for the serial check");
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            f[i * n + j] = rhs(i, j, dx, dy);
    double error = 0.0;
    for (long k = 0; k < iters; k++) {
        memcpy(uo, u, n * n * sizeof *u);
        error = sqrt(sweep(u, uo, f, n, 1, n - 1, ax, ay, b)) / (double)(n * n);
    }
    free(uo);
    free(f);
    *out = u;
    return error;
}

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID();
    const size_t n = cfg->n;
    const double dx = 2.0 / (double)(n - 1), dy = dx;
    const double ax = 1.0 / (dx * dx), ay = 1.0 / (dy * dy);
    const double b = -2.0 / (dx * dx) - 2.0 / (dy * dy) - alpha;

    double *u = shm_alloc_or_die(n * n * sizeof(double), "u");
    double *uold = shm_alloc_or_die(n * n * sizeof(double), "uold");
    double *f = shm_alloc_or_die(n * n * sizeof(double), "f");
    /* lock variant: two accumulator slots used alternately, so that the slot
     * for the next iteration can be cleared while this one is still read */
    double *errsum = shm_alloc_or_die(2 * sizeof(double), "error accumulator");
    SHM_LOCK_DECL(errlock) = SHM_LOCK_CREATE();

    size_t lo, hi;
    shm_owned_range(u, n, n * sizeof(double), id, &lo, &hi);
    /* interior rows this worker relaxes */
    size_t r0 = lo < 1 ? 1 : lo, r1 = hi > n - 1 ? n - 1 : hi;
    if (r0 > r1) r0 = r1;
    for (size_t i = lo; i < hi; i++)
        for (size_t j = 0; j < n; j++) {
            u[i * n + j] = 0.0;
            f[i * n + j] = rhs(i, j, dx, dy);
        }
    SHM_BARRIER();

    double error = 0.0;
    long total_iters = cfg->iters + 1; /* +1: the untimed warm-up */
    for (long k = 0; k < total_iters; k++) {
        if (k == 1) shm_kernel_begin();
        memcpy(uold + lo * n, u + lo * n, (hi - lo) * n * sizeof(double));
        SHM_BARRIER(); /* neighbours' uold rows are complete */
        double local = sweep(u, uold, f, n, r0, r1, ax, ay, b);
        if (cfg->use_lock) {
            int s = (int)(k & 1);
            if (id == 0) errsum[1 - s] = 0.0; /* everyone finished reading it last iteration */
            SHM_LOCK(errlock);
            errsum[s] += local;
            SHM_UNLOCK(errlock);
            SHM_BARRIER(); /* all contributions are in */
            error = errsum[s];
        } else {
            /* the all-reduce also orders this sweep's reads of uold before
             * the next iteration's copy into it */
            SHM_REDUCE_SUM_DOUBLE(&local, 1);
            error = local;
        }
        error = sqrt(error) / (double)(n * n);
    }
    double t = shm_kernel_end();

    int valid = 1;
    if (id == 0) {
        double *ref;
        double ref_err = serial_jacobi(n, total_iters, &ref);
        valid = shm_check_array("jacobi u", u, ref, n * n, 1e-12, 1e-300) &&
                shm_check_scalar("jacobi residual", error, ref_err, 1e-9);
        free(ref);
        printf("jacobi(%s): n=%zu iterations=%ld workers=%d residual=%.6e time/iter=%.4f ms\n",
               cfg->use_lock ? "lock" : "reduce", n, cfg->iters, SHM_NPROCS(), error, 1e3 * t / (double)cfg->iters);
    }
    char size[64];
    snprintf(size, sizeof size, "n=%zu", n);
    return shm_report("jacobi", cfg->use_lock ? "lock" : "reduce", size, 1e3 * t / (double)cfg->iters, "ms/iter", t,
                      cfg->iters, valid, NULL);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.n = 2048, .iters = 50, .use_lock = 0};
    const struct shm_option opts[] = {
        {"size", "n", SHM_OPT_SIZE, &cfg.n, "N", "grid side", SHM_RANGE(3, 1 << 20)},
        {"iterations", "i", SHM_OPT_LONG, &cfg.iters, "I", "timed iterations", SHM_AT_LEAST(1)},
        {"variant", "v", SHM_OPT_CHOICE, &cfg.use_lock, NULL, "combine the residual with an all-reduce or under a lock",
         .choices = "reduce|lock"},
        SHM_OPTIONS_END};
    int rc = shm_parse_options(argc, argv, opts, "Helmholtz Jacobi solver on an N x N grid (OmpSCR, Samhita/RegC).");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    return shm_run_and_finish(worker, &cfg);
}
