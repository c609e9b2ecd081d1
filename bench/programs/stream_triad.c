/* stream_triad -- STREAM TRIAD, A = B + alpha*C over n doubles (Samhita/RegC).
 *
 * Every worker initialises and updates only the elements it homes (owner
 * computes, one agora_alloc per array so block placement gives worker r the
 * r-th 1/N of each array); a barrier separates iterations, as in Samhita/RegC.
 * Under Agora, after the warm-up iteration every access is to a local page,
 * so the bandwidth should match pthreads.
 *
 * Usage: bench_stream_triad [-n ELEMENTS] [-i ITERATIONS] [-p THREADS]
 * Figure: GB/s, counting 3 x 8 bytes per element per iteration (STREAM's rule).
 * Validation (worker 0): every A[i] equals B[i] + alpha*C[i] computed serially
 * (the same expression, so the comparison is exact).
 *
 * --remote K (default 0): worker i works on the elements worker (i+K) mod N
 * homes, so that every access is to a page homed elsewhere and the data
 * streams through the rank's cache of remote pages, as on Samhita's compute
 * servers with memory servers (Samhita/RegC figure 4; docs/cache.md). */
#include "shm.h"

struct config {
    size_t n;
    long iters;
    long remote;
};

static const double alpha = 3.0;

/* Deterministic inputs, independent of the number of workers. */
static double init_b(size_t i) { return 1.0 + (double)(i % 1000) * 1e-3; }
static double init_c(size_t i) { return 2.0 - (double)(i % 777) * 1e-3; }

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID();
    const size_t n = cfg->n;

    double *a = shm_alloc_or_die(n * sizeof(double), "A");
    double *b = shm_alloc_or_die(n * sizeof(double), "B");
    double *c = shm_alloc_or_die(n * sizeof(double), "C");

    size_t lo, hi;
    const int nprocs = SHM_NPROCS();
    const int from = (int)((id + cfg->remote % nprocs + nprocs) % nprocs);
    shm_owned_range(a, n, sizeof(double), from, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        a[i] = 0.0;
        b[i] = init_b(i);
        c[i] = init_c(i);
    }

    /* warm-up iteration: first-touch / first-fault costs stay out of the
     * timed region */
    SHM_BARRIER();
    for (size_t i = lo; i < hi; i++)
        a[i] = b[i] + alpha * c[i];

    shm_kernel_begin();
    for (long it = 0; it < cfg->iters; it++) {
        for (size_t i = lo; i < hi; i++)
            a[i] = b[i] + alpha * c[i];
        SHM_BARRIER();
    }
    double t = shm_kernel_end();

    int valid = 1;
    if (id == 0) {
        for (size_t i = 0; i < n; i++) {
            double want = init_b(i) + alpha * init_c(i);
            if (a[i] != want || b[i] != init_b(i) || c[i] != init_c(i)) {
                fprintf(stderr,
                        "VALIDATION FAILED: stream_triad: A[%zu] = %.17g, expected %.17g "
                        "(B %.17g C %.17g)\n",
                        i, a[i], want, b[i], c[i]);
                valid = 0;
                break;
            }
        }
    }

    double gbs = 3.0 * sizeof(double) * (double)n * (double)cfg->iters / t / 1e9;
    if (id == 0)
        printf("stream_triad: n=%zu iterations=%ld workers=%d time=%.4f s bandwidth=%.3f GB/s\n", n, cfg->iters,
               SHM_NPROCS(), t, gbs);
    char size[64];
    snprintf(size, sizeof size, "n=%zu", n);
    return shm_report("stream_triad", cfg->remote ? "remote" : "default", size, gbs, "GB/s", t, cfg->iters, valid,
                      NULL);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.n = (size_t)4 << 20, .iters = 200, .remote = 0};
    const struct shm_option opts[] = {
        {"size", "n", SHM_OPT_SIZE, &cfg.n, "N", "doubles per array", SHM_RANGE(1, 1L << 36)},
        {"iterations", "i", SHM_OPT_LONG, &cfg.iters, "I", "timed iterations", SHM_AT_LEAST(1)},
        {"remote", "r", SHM_OPT_LONG, &cfg.remote, "K", "work on the elements worker id+K homes (0: own)",
         SHM_RANGE(0, 1L << 20)},
        SHM_OPTIONS_END};
    int rc = shm_parse_options(argc, argv, opts, "STREAM TRIAD, A = B + alpha*C (Samhita/RegC).");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    return shm_run_and_finish(worker, &cfg);
}
