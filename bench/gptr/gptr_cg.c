/* gptr_cg -- Themis's naive conjugate gradient (Themis v0, section 3.3)
 * with explicit global pointers.
 *
 * The system is bench_cg's (bench/programs/cg.c): the 5-point Laplacian of
 * a K x K grid plus a diagonal shift of 0.05 (n = K^2 unknowns, symmetric
 * positive definite), in ELLPACK form (5 column/value slots per row), right
 * side 1 + 0.1 (i mod 7), x0 = 0. The matrix and every vector (x, r, p, q)
 * are spread arrays distributed by rows, block-wise (rank q holds rows
 * [q n/p, (q+1) n/p)). As in v0, "all pointers are global" and every access
 * is a blocking agora_gptr_read or agora_gptr_write, one element at a time,
 * the rank's own elements too: the product q = A p reads the matrix entries
 * and p[col] through global pointers (the entries of p next to the band
 * edges, rows i +- K, are the other ranks'); the dot products sum the
 * rank's own elements and all-reduce them (agora_reduce); a barrier after the
 * update of p makes it visible before the next product.
 *
 * Validation (rank 0): a serial CG in private memory for the same number of
 * iterations; x (fetched with agora_gptr_get) must agree to 1e-8 in relative
 * 2-norm, the residual norm to 1e-6 relative, and the residual must have
 * decreased.
 *
 * Usage: gptr_cg [-n K] [-i ITERATIONS] [--json PATH]
 *   defaults K = 256 (n = 65536), 20 timed iterations after one warm-up. */
#include "gptr_bench.h"

#define W 5 /* ELLPACK slots per row */

static double rhs(size_t i) { return 1.0 + 0.1 * (double)(i % 7); }
static const double shift = 0.05;

/* bench_cg's make_row */
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

static double serial_dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* Serial CG in private memory (bench_cg's serial_cg); returns x and the final r.r. */
static double serial_cg(size_t k, long iters, double **xout)
{
    size_t n = k * k;
    int32_t *col = malloc(n * W * sizeof *col);
    double *val = malloc(n * W * sizeof *val), *x = calloc(n, sizeof *x), *r = malloc(n * sizeof *r),
           *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q);
    if (!col || !val || !x || !r || !p || !q) gb_die("gptr_cg: out of memory for the serial check");
    for (size_t i = 0; i < n; i++) {
        make_row(i, k, col + i * W, val + i * W);
        r[i] = p[i] = rhs(i);
    }
    double rho = serial_dot(r, r, n);
    for (long it = 0; it < iters; it++) {
        for (size_t i = 0; i < n; i++) {
            double s = 0.0;
            for (int t = 0; t < W; t++)
                s += val[i * W + t] * p[col[i * W + t]];
            q[i] = s;
        }
        double alpha = rho / serial_dot(p, q, n);
        for (size_t i = 0; i < n; i++) {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        double rho_new = serial_dot(r, r, n), beta = rho_new / rho;
        rho = rho_new;
        for (size_t i = 0; i < n; i++)
            p[i] = r[i] + beta * p[i];
    }
    free(col), free(val), free(r), free(p), free(q);
    *xout = x;
    return rho;
}

/* A spread vector of `per` elements of `size` bytes per rank. */
struct spread {
    agora_gptr_t base;
    size_t per, size;
};
static inline agora_gptr_t elem(const struct spread *v, size_t i)
{
    return agora_gptr_make((int)(i / v->per), agora_gptr_offset(v->base) + (i % v->per) * v->size);
}
static inline double rd(const struct spread *v, size_t i)
{
    double x;
    GB_CHECK(agora_gptr_read(elem(v, i), &x, sizeof x));
    return x;
}
static inline void wr(const struct spread *v, size_t i, double x)
{
    GB_CHECK(agora_gptr_write(elem(v, i), &x, sizeof x));
}

/* sum over this rank's rows of a[i] * b[i], all-reduced */
static double dot(const struct spread *a, const struct spread *b, size_t lo, size_t hi)
{
    double s = 0.0;
    for (size_t i = lo; i < hi; i++)
        s += rd(a, i) * rd(b, i);
    GB_CHECK(agora_reduce(&s, 1, AGORA_DOUBLE, AGORA_SUM));
    return s;
}

static const char usage[] = "usage: gptr_cg [-n K] [-i ITERATIONS] [--json PATH]\n"
                            "Themis's naive CG (v0) with global pointers, on bench_cg's K x K Laplacian.\n";

int main(int argc, char **argv)
{
    GB_CHECK(agora_init(&argc, &argv));
    const int me = agora_rank(), np = agora_nranks();
    long k_opt = 256, iters = 20;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = gb_opt(argc, argv, &i, "-n")) || (v = gb_opt(argc, argv, &i, "--size")))
            k_opt = gb_long("-n", v, 2, 40000);
        else if ((v = gb_opt(argc, argv, &i, "-i")) || (v = gb_opt(argc, argv, &i, "--iterations")))
            iters = gb_long("-i", v, 1, 1 << 20);
        else
            gb_common_option(argc, argv, &i, &json, usage);
    }
    const size_t k = (size_t)k_opt, n = k * k;
    if (n % (size_t)np) {
        if (me == 0) fprintf(stderr, "gptr_cg: n = K^2 = %zu must be a multiple of the %d ranks\n", n, np);
        agora_finalize();
        return 2;
    }
    const size_t per = n / (size_t)np, lo = (size_t)me * per, hi = lo + per;
    struct spread col = {gb_alloc(per * W * sizeof(int32_t), "matrix columns"), per, W * sizeof(int32_t)};
    struct spread val = {gb_alloc(per * W * sizeof(double), "matrix values"), per, W * sizeof(double)};
    struct spread x = {gb_alloc(per * sizeof(double), "x"), per, sizeof(double)};
    struct spread r = {gb_alloc(per * sizeof(double), "r"), per, sizeof(double)};
    struct spread p = {gb_alloc(per * sizeof(double), "p"), per, sizeof(double)};
    struct spread q = {gb_alloc(per * sizeof(double), "q"), per, sizeof(double)};
    {
        int32_t *lcol = agora_gptr_to_local(col.base);
        double *lval = agora_gptr_to_local(val.base), *lx = agora_gptr_to_local(x.base),
               *lr = agora_gptr_to_local(r.base), *lp = agora_gptr_to_local(p.base);
        for (size_t i = lo; i < hi; i++) {
            make_row(i, k, lcol + (i - lo) * W, lval + (i - lo) * W);
            lx[i - lo] = 0.0;
            lr[i - lo] = lp[i - lo] = rhs(i);
        }
    }
    GB_CHECK(agora_barrier());
    double rho = dot(&r, &r, lo, hi);
    const double rho0 = rho;
    struct gb_config gc = gb_config();

    long total = iters + 1;
    double *t;
    struct gb_counts *cs;
    gb_timing_buffers(total, &t, &cs);
    for (long it = 0; it < total; it++) {
        GB_CHECK(agora_barrier());
        cs[it] = gb_snapshot();
        double t0 = agora_wtime();
        /* q = A p, element at a time */
        for (size_t i = lo; i < hi; i++) {
            agora_gptr_t crow = elem(&col, i), vrow = elem(&val, i);
            double s = 0.0;
            for (int j = 0; j < W; j++) {
                int32_t c;
                double a;
                GB_CHECK(agora_gptr_read(agora_gptr_add(crow, j * (int64_t)sizeof(int32_t)), &c, sizeof c));
                GB_CHECK(agora_gptr_read(agora_gptr_add(vrow, j * (int64_t)sizeof(double)), &a, sizeof a));
                s += a * rd(&p, (size_t)c);
            }
            wr(&q, i, s);
        }
        double pq = dot(&p, &q, lo, hi); /* every rank has read p once this returns */
        double alpha = rho / pq;
        for (size_t i = lo; i < hi; i++) {
            wr(&x, i, rd(&x, i) + alpha * rd(&p, i));
            wr(&r, i, rd(&r, i) - alpha * rd(&q, i));
        }
        double rho_new = dot(&r, &r, lo, hi), beta = rho_new / rho;
        rho = rho_new;
        for (size_t i = lo; i < hi; i++)
            wr(&p, i, rd(&r, i) + beta * rd(&p, i));
        GB_CHECK(agora_barrier()); /* the new p visible before the next product */
        t[it] = agora_wtime() - t0;
    }
    cs[total] = gb_snapshot();
    gb_max_each(t, total);

    int valid = 1;
    double xerr = 0;
    if (me == 0) {
        double *gx = malloc(n * sizeof *gx), *ref;
        if (!gx) gb_die("out of memory for the check");
        for (int q2 = 0; q2 < np; q2++)
            GB_CHECK(agora_gptr_get(gx + (size_t)q2 * per, agora_gptr_on(x.base, q2), per * sizeof(double)));
        double ref_rho = serial_cg(k, total, &ref);
        double num = 0.0, den = 0.0;
        for (size_t i = 0; i < n; i++) {
            num += (gx[i] - ref[i]) * (gx[i] - ref[i]);
            den += ref[i] * ref[i];
        }
        xerr = sqrt(num / (den > 0 ? den : 1.0));
        if (!(xerr <= 1e-8)) {
            fprintf(stderr, "VALIDATION FAILED: gptr_cg: x differs from the serial solution by %.3e\n", xerr);
            valid = 0;
        }
        double rn = sqrt(rho), rr = sqrt(ref_rho);
        if (valid && fabs(rn - rr) > 1e-6 * rr + 1e-12 * sqrt(rho0)) {
            fprintf(stderr, "VALIDATION FAILED: gptr_cg: residual norm %.17g, serial %.17g\n", rn, rr);
            valid = 0;
        }
        if (valid && !(rho < rho0)) {
            fprintf(stderr, "VALIDATION FAILED: gptr_cg: residual did not decrease (%.3e -> %.3e)\n", sqrt(rho0),
                    sqrt(rho));
            valid = 0;
        }
        free(gx), free(ref);
    }
    valid = gb_all(valid);

    struct gb_counts cold = gb_delta_sum(&cs[0], &cs[1]), warm = gb_delta_sum(&cs[1], &cs[total]);
    double mean = gb_timed_mean(t, total);
    agora_gptr_stats_t wg = gb_gptr(&warm);
    char cfgjson[256], ccold[1024], cwarm[1024], tl[4096], out[8192];
    gb_config_json(cfgjson, sizeof cfgjson, &gc);
    gb_counts_json(ccold, sizeof ccold, &cold);
    gb_counts_json(cwarm, sizeof cwarm, &warm);
    gb_array_json(tl, sizeof tl, t + 1, iters < 200 ? (int)iters : 200, "%.6f");
    snprintf(out, sizeof out,
             "{\"program\":\"gptr_cg\",%s,\"ranks\":%d,\"K\":%zu,\"n\":%zu,\"iterations\":%ld,"
             "\"time_per_iter_ms\":%.4f,\"time_per_iter_s_all\":%s,\"first_iter_ms\":%.4f,\"residual0\":%.6e,"
             "\"residual\":%.6e,\"x_error\":%.3e,\"hit_rate\":%.6f,\"misses_per_iter\":%.1f,"
             "\"requests_per_iter\":%.1f,\"valid\":%s,\"counters_first_iter\":%s,\"counters_timed\":%s}",
             cfgjson, np, k, n, iters, 1e3 * mean, tl, 1e3 * t[0], sqrt(rho0), sqrt(rho), xerr, gb_hit_rate(&warm),
             (double)wg.misses / (double)iters, (double)wg.requests / (double)iters, valid ? "true" : "false", ccold,
             cwarm);
    if (me == 0)
        printf("gptr_cg %s: K=%zu n=%zu ranks=%d |r0|=%.6e |r|=%.6e x-diff=%.2e: first %.3f ms, then %.4f ms/iter "
               "(hit %.4f, %.0f misses/iter, %.0f requests/iter)%s\n",
               gc.scheme, k, n, np, sqrt(rho0), sqrt(rho), xerr, 1e3 * t[0], 1e3 * mean, gb_hit_rate(&warm),
               (double)wg.misses / (double)iters, (double)wg.requests / (double)iters, valid ? "" : "  INVALID");
    gb_emit(json, out);
    free(t), free(cs);
    GB_CHECK(agora_finalize());
    return valid ? 0 : 1;
}
