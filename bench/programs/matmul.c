/* matmul -- dense C = A x B (the matrix multiply of SWCC Split-C).
 *
 * n x n matrices of doubles, each its own allocation; worker r computes the
 * rows of C it homes under block placement (its block of C), reading its rows
 * of A and all of B. Two variants, as in SWCC Split-C:
 *   --variant naive    dot product per element of C, with the k loop started
 *                      at a different offset on every worker (Split-C's
 *                      staggering to spread the load on B); ignores locality
 *                      (B is walked down a column).
 *   --variant blocked  b x b tiles: copy a tile of A and a tile of B into
 *                      private buffers (the bulk_get of the paper), multiply
 *                      locally, and store the finished tile of C.
 *
 * Usage: bench_matmul [-n N] [-i ITERATIONS] [-b BLOCK] [--variant naive|blocked] [-p P]
 *   defaults N = 512, BLOCK = 64, and 3 (naive) or 30 (blocked) timed
 *   multiplications after one untimed warm-up.
 * Figure: GFLOP/s (2 N^3 flops per multiplication).
 * Validation (worker 0): A and B hold small integers, so every product and
 * partial sum is an exactly representable integer and C must equal a serial
 * i-k-j product exactly, whatever the summation order. */
#include "shm.h"

struct config {
    size_t n, bs;
    long iters;
    int blocked;
};

static double a_of(size_t i, size_t k) { return (double)((int)((i * 3 + k * 7) % 17) - 8); }
static double b_of(size_t k, size_t j) { return (double)((int)((k * 5 + j * 11) % 13) - 6); }

static void naive(const double *A, const double *B, double *C, size_t n, size_t lo, size_t hi, size_t kstart)
{
    for (size_t i = lo; i < hi; i++)
        for (size_t j = 0; j < n; j++) {
            double sum = 0.0;
            size_t kk = kstart;
            for (size_t k = 0; k < n; k++) {
                sum += A[i * n + kk] * B[kk * n + j];
                if (++kk == n) kk = 0;
            }
            C[i * n + j] = sum;
        }
}

static void blocked(const double *A, const double *B, double *C, size_t n, size_t lo, size_t hi, size_t bs,
                    size_t kstart, double *la, double *lb, double *lc)
{
    size_t nkb = (n + bs - 1) / bs;
    for (size_t i0 = lo; i0 < hi; i0 += bs) {
        size_t ib = hi - i0 < bs ? hi - i0 : bs;
        for (size_t j0 = 0; j0 < n; j0 += bs) {
            size_t jb = n - j0 < bs ? n - j0 : bs;
            memset(lc, 0, ib * jb * sizeof *lc);
            for (size_t t = 0; t < nkb; t++) {
                size_t k0 = ((kstart / bs + t) % nkb) * bs;
                size_t kb = n - k0 < bs ? n - k0 : bs;
                /* bulk copies of the two tiles into private memory */
                for (size_t i = 0; i < ib; i++)
                    memcpy(la + i * kb, A + (i0 + i) * n + k0, kb * sizeof *la);
                for (size_t k = 0; k < kb; k++)
                    memcpy(lb + k * jb, B + (k0 + k) * n + j0, jb * sizeof *lb);
                /* local multiply, i-k-j order */
                for (size_t i = 0; i < ib; i++)
                    for (size_t k = 0; k < kb; k++) {
                        double aik = la[i * kb + k];
                        const double *brow = lb + k * jb;
                        double *crow = lc + i * jb;
                        for (size_t j = 0; j < jb; j++)
                            crow[j] += aik * brow[j];
                    }
            }
            for (size_t i = 0; i < ib; i++)
                memcpy(C + (i0 + i) * n + j0, lc + i * jb, jb * sizeof *lc);
        }
    }
}

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID();
    const size_t n = cfg->n, bs = cfg->bs;

    double *A = shm_alloc_or_die(n * n * sizeof(double), "A");
    double *B = shm_alloc_or_die(n * n * sizeof(double), "B");
    double *C = shm_alloc_or_die(n * n * sizeof(double), "C");
    size_t lo, hi;
    shm_owned_range(C, n, n * sizeof(double), id, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        for (size_t j = 0; j < n; j++) {
            A[i * n + j] = a_of(i, j);
            B[i * n + j] = b_of(i, j);
            C[i * n + j] = 0.0;
        }
    double *la = malloc(bs * bs * sizeof *la), *lb = malloc(bs * bs * sizeof *lb), *lc = malloc(bs * bs * sizeof *lc);
    if (!la || !lb || !lc) shm_die("matmul: out of memory for tiles");
    size_t kstart = (size_t)id * n / (size_t)SHM_NPROCS(); /* staggered start */
    SHM_BARRIER();

    long total = cfg->iters + 1;
    for (long it = 0; it < total; it++) {
        if (it == 1) shm_kernel_begin();
        if (cfg->blocked)
            blocked(A, B, C, n, lo, hi, bs, kstart, la, lb, lc);
        else
            naive(A, B, C, n, lo, hi, kstart);
        SHM_BARRIER();
    }
    double t = shm_kernel_end();
    free(la), free(lb), free(lc);
    const char *variant = cfg->blocked ? "blocked" : "naive";

    int valid = 1;
    if (id == 0) {
        double *ref = calloc(n * n, sizeof *ref), *brow = malloc(n * sizeof *brow);
        if (!ref || !brow) shm_die("matmul: out of memory for the serial check");
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < n; k++) {
                double aik = a_of(i, k);
                for (size_t j = 0; j < n; j++)
                    ref[i * n + j] += aik * b_of(k, j);
            }
        valid = shm_check_array("matmul C", C, ref, n * n, 0.0, 0.0);
        free(ref), free(brow);
    }
    double gflops = 2.0 * (double)n * (double)n * (double)n * (double)cfg->iters / t / 1e9;
    if (id == 0)
        printf("matmul(%s): n=%zu block=%zu iterations=%ld workers=%d time/mult=%.4f s %.3f GFLOP/s\n", variant, n, bs,
               cfg->iters, SHM_NPROCS(), t / (double)cfg->iters, gflops);
    char size[64];
    snprintf(size, sizeof size, "n=%zu", n);
    return shm_report("matmul", variant, size, gflops, "GFLOP/s", t, cfg->iters, valid, NULL);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.n = 512, .bs = 64, .iters = 0, .blocked = 0};
    const struct shm_option opts[] = {
        {"size", "n", SHM_OPT_SIZE, &cfg.n, "N", "matrix side", SHM_RANGE(1, 1 << 20)},
        {"iterations", "i", SHM_OPT_LONG, &cfg.iters, "I", "timed multiplications; 0: by variant",
         .default_text = "3 naive, 30 blocked", SHM_AT_LEAST(0)},
        {"block", "b", SHM_OPT_SIZE, &cfg.bs, "B", "tile side of the blocked variant", SHM_RANGE(1, 1 << 20)},
        {"variant", "v", SHM_OPT_CHOICE, &cfg.blocked, NULL, "dot product per element, or b x b tiles",
         .choices = "naive|blocked"},
        SHM_OPTIONS_END};
    int rc = shm_parse_options(argc, argv, opts, "Dense matrix multiply C = A x B (SWCC Split-C).");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    if (cfg.iters == 0) /* default: about the same time for both variants */
        cfg.iters = cfg.blocked ? 30 : 3;
    return shm_run_and_finish(worker, &cfg);
}
