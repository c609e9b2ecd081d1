/* sor -- red-black successive over-relaxation (TreadMarks SOR, Iosevich & Schuster).
 *
 * A rows x cols grid with fixed boundary values (top row 1, others 0) is
 * relaxed in red-black order: in each iteration every interior point whose
 * (i + j) is even ("red") is updated from its four neighbours, then, after a
 * barrier, every odd ("black") point. A red update only reads black points and
 * vice versa, so the result does not depend on the order of the updates
 * within a half-sweep.
 *
 * Rows are decomposed owner-computes under block placement; the only shared
 * data are the rows at band edges (Iosevich & Schuster: "only the data placed on the
 * boundaries between different threads is actually shared").
 *
 * Usage: bench_sor [-n ROWS] [-m COLS] [-i ITERATIONS] [-p P]
 *   grid size including the boundary; defaults 2048 x 2048 (rows of exactly
 *   4 pages), 100 timed iterations after one untimed warm-up iteration.
 * Figure: ms per iteration (red + black half-sweep).
 * Validation (worker 0): a serial red-black SOR in private memory; the grids
 * must agree to 1e-12 relative (each point is the same expression of the same
 * operands, so they should agree exactly). */
#include "shm.h"

struct config {
    size_t rows, cols;
    long iters;
};

static const double omega = 1.5;

/* Half-sweep of colour `colour` (0 red, 1 black) over rows [r0, r1) of a grid
 * with `w` columns (including the two boundary columns). */
static void half_sweep(double *g, size_t w, size_t r0, size_t r1, int colour)
{
    for (size_t i = r0; i < r1; i++) {
        double *up = g + (i - 1) * w, *row = g + i * w, *dn = g + (i + 1) * w;
        size_t j0 = 1 + ((i + 1 + (size_t)colour) & 1); /* first j with (i+j)%2 == colour */
        for (size_t j = j0; j + 1 < w; j += 2) {
            double avg = 0.25 * (up[j] + dn[j] + row[j - 1] + row[j + 1]);
            row[j] += omega * (avg - row[j]);
        }
    }
}

static double boundary_value(size_t i, size_t j, size_t h, size_t w)
{
    (void)j, (void)h, (void)w;
    return i == 0 ? 1.0 : 0.0;
}

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID();
    const size_t h = cfg->rows, w = cfg->cols; /* including the boundary */

    double *g = shm_alloc_or_die(h * w * sizeof(double), "grid");
    size_t lo, hi;
    shm_owned_range(g, h, w * sizeof(double), id, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        for (size_t j = 0; j < w; j++)
            g[i * w + j] = (i == 0 || i == h - 1 || j == 0 || j == w - 1) ? boundary_value(i, j, h, w) : 0.0;
    size_t r0 = lo < 1 ? 1 : lo, r1 = hi > h - 1 ? h - 1 : hi;
    if (r0 > r1) r0 = r1;
    SHM_BARRIER();

    long total = cfg->iters + 1;
    for (long k = 0; k < total; k++) {
        if (k == 1) shm_kernel_begin();
        half_sweep(g, w, r0, r1, 0);
        SHM_BARRIER();
        half_sweep(g, w, r0, r1, 1);
        SHM_BARRIER();
    }
    double t = shm_kernel_end();

    int valid = 1;
    if (id == 0) {
        double *ref = malloc(h * w * sizeof(double));
        if (!ref) shm_die("sor: out of memory for the serial check");
        for (size_t i = 0; i < h; i++)
            for (size_t j = 0; j < w; j++)
                ref[i * w + j] = (i == 0 || i == h - 1 || j == 0 || j == w - 1) ? boundary_value(i, j, h, w) : 0.0;
        for (long k = 0; k < total; k++) {
            half_sweep(ref, w, 1, h - 1, 0);
            half_sweep(ref, w, 1, h - 1, 1);
        }
        valid = shm_check_array("sor grid", g, ref, h * w, 1e-12, 1e-300);
        double sum = 0.0;
        for (size_t i = 0; i < h * w; i++)
            sum += g[i];
        free(ref);
        printf("sor: %zux%zu iterations=%ld workers=%d checksum=%.12e time/iter=%.4f ms\n", cfg->rows, cfg->cols,
               cfg->iters, SHM_NPROCS(), sum, 1e3 * t / (double)cfg->iters);
    }
    char size[64];
    snprintf(size, sizeof size, "%zux%zu", cfg->rows, cfg->cols);
    return shm_report("sor", "default", size, 1e3 * t / (double)cfg->iters, "ms/iter", t, cfg->iters, valid, NULL);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.rows = 2048, .cols = 2048, .iters = 100};
    const struct shm_option opts[] = {
        {"rows", "n", SHM_OPT_SIZE, &cfg.rows, "R", "grid rows, boundary included", SHM_RANGE(3, 1 << 20)},
        {"cols", "m", SHM_OPT_SIZE, &cfg.cols, "C", "grid columns, boundary included", SHM_RANGE(3, 1 << 20)},
        {"iterations", "i", SHM_OPT_LONG, &cfg.iters, "I", "timed iterations", SHM_AT_LEAST(1)},
        SHM_OPTIONS_END};
    int rc =
        shm_parse_options(argc, argv, opts, "Red-black successive over-relaxation (TreadMarks, Iosevich & Schuster).");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    return shm_run_and_finish(worker, &cfg);
}
