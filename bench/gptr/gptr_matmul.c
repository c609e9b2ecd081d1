/* gptr_matmul -- SWCC Split-C's naive matrix multiply (section 3.2) with
 * explicit global pointers.
 *
 * C = A x B, n x n doubles. Each matrix is a spread array distributed by
 * rows, block-wise: rank q holds rows [q*r, (q+1)*r), r = n/p, row-major, so
 * element (i, j) is at rank i / r, offset ((i % r) * n + j) * 8 of the
 * matrix's allocation (the layout bench_matmul's block placement gives).
 * Each rank computes its own rows of C with the paper's kernel: every A[i][kk]
 * and B[kk][j] is one agora_gptr_read (also those on the rank itself, as
 * Split-C's global-pointer dereference), the dot product starts at
 * kk = MYPROC * r (the staggered start), and C[i][j] is written with one
 * agora_gptr_write.
 *
 * A and B hold small integers (the same as bench_matmul's), so the product
 * is exact whatever the order of the sums; every rank checks its rows of C
 * against a serial product (through agora_gptr_to_local after the last
 * barrier: only the owner writes C).
 *
 * The first multiplication is reported apart (cold: every remote block or
 * line is fetched); the figure is the mean of the --iterations timed ones
 * that follow (as bench_matmul's). Under swcc B stays cached across
 * barriers (nobody writes it); under ordercache a barrier drops the cache.
 *
 * Usage: gptr_matmul [-n N] [-i ITERATIONS] [--json PATH]
 *   defaults n = 128 (SWCC Split-C's figure 8), 3 timed multiplications. */
#include "gptr_bench.h"

static double a_of(size_t i, size_t k) { return (double)((int)((i * 3 + k * 7) % 17) - 8); }
static double b_of(size_t k, size_t j) { return (double)((int)((k * 5 + j * 11) % 13) - 6); }

static const char usage[] = "usage: gptr_matmul [-n N] [-i ITERATIONS] [--json PATH]\n"
                            "SWCC Split-C's naive matrix multiply, element-at-a-time global-pointer reads.\n";

struct matrix {
    agora_gptr_t base; /* this rank's part */
    size_t n, r;
};

static inline agora_gptr_t at(const struct matrix *m, size_t i, size_t j)
{
    return agora_gptr_make((int)(i / m->r), agora_gptr_offset(m->base) + ((i % m->r) * m->n + j) * sizeof(double));
}

int main(int argc, char **argv)
{
    GB_CHECK(agora_init(&argc, &argv));
    const int me = agora_rank(), p = agora_nranks();
    long n_opt = 128, iters = 3;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = gb_opt(argc, argv, &i, "-n")) || (v = gb_opt(argc, argv, &i, "--size")))
            n_opt = gb_long("-n", v, 1, 1 << 16);
        else if ((v = gb_opt(argc, argv, &i, "-i")) || (v = gb_opt(argc, argv, &i, "--iterations")))
            iters = gb_long("-i", v, 1, 1 << 20);
        else
            gb_common_option(argc, argv, &i, &json, usage);
    }
    const size_t n = (size_t)n_opt;
    if (n % (size_t)p) {
        if (me == 0) fprintf(stderr, "gptr_matmul: n = %zu must be a multiple of the %d ranks\n", n, p);
        agora_finalize();
        return 2;
    }
    const size_t r = n / (size_t)p, lo = (size_t)me * r, hi = lo + r;
    struct matrix A = {gb_alloc(r * n * sizeof(double), "A"), n, r};
    struct matrix B = {gb_alloc(r * n * sizeof(double), "B"), n, r};
    struct matrix C = {gb_alloc(r * n * sizeof(double), "C"), n, r};
    double *la = agora_gptr_to_local(A.base), *lb = agora_gptr_to_local(B.base), *lc = agora_gptr_to_local(C.base);
    for (size_t i = lo; i < hi; i++)
        for (size_t j = 0; j < n; j++) {
            la[(i - lo) * n + j] = a_of(i, j);
            lb[(i - lo) * n + j] = b_of(i, j);
            lc[(i - lo) * n + j] = 0.0;
        }
    const size_t kstart = (size_t)me * r; /* kk = MYPROC * r */
    struct gb_config cfg = gb_config();
    GB_CHECK(agora_barrier());

    long total = iters + 1;
    double *t;
    struct gb_counts *cs;
    gb_timing_buffers(total, &t, &cs);
    for (long it = 0; it < total; it++) {
        GB_CHECK(agora_barrier());
        cs[it] = gb_snapshot();
        double t0 = agora_wtime();
        for (size_t i = lo; i < hi; i++)
            for (size_t j = 0; j < n; j++) {
                double sum = 0.0;
                size_t kk = kstart;
                for (size_t k = 0; k < n; k++) {
                    double a, b;
                    GB_CHECK(agora_gptr_read(at(&A, i, kk), &a, sizeof a));
                    GB_CHECK(agora_gptr_read(at(&B, kk, j), &b, sizeof b));
                    sum += a * b;
                    if (++kk == n) kk = 0;
                }
                GB_CHECK(agora_gptr_write(at(&C, i, j), &sum, sizeof sum));
            }
        GB_CHECK(agora_barrier());
        t[it] = agora_wtime() - t0;
    }
    cs[total] = gb_snapshot();
    gb_max_each(t, total);

    /* check this rank's rows of C (only their owner wrote them) */
    uint64_t bad = 0;
    double *ref = calloc(n, sizeof *ref);
    if (!ref) gb_die("out of memory");
    for (size_t i = lo; i < hi; i++) {
        memset(ref, 0, n * sizeof *ref);
        for (size_t k = 0; k < n; k++) {
            double aik = a_of(i, k);
            for (size_t j = 0; j < n; j++)
                ref[j] += aik * b_of(k, j);
        }
        for (size_t j = 0; j < n; j++)
            if (lc[(i - lo) * n + j] != ref[j]) {
                if (bad < 5)
                    fprintf(stderr, "rank %d: C[%zu][%zu] = %g, expected %g\n", me, i, j, lc[(i - lo) * n + j], ref[j]);
                bad++;
            }
    }
    free(ref);
    int64_t b64 = (int64_t)bad;
    GB_CHECK(agora_reduce(&b64, 1, AGORA_INT64, AGORA_SUM));
    int valid = b64 == 0;

    struct gb_counts cold = gb_delta_sum(&cs[0], &cs[1]), warm = gb_delta_sum(&cs[1], &cs[total]);
    double med = gb_timed_mean(t, total); /* the mean, as bench_matmul's figure */
    double flops = 2.0 * (double)n * (double)n * (double)n;
    char cfgjson[256], ccold[1024], cwarm[1024], tl[2048], out[8192];
    gb_config_json(cfgjson, sizeof cfgjson, &cfg);
    gb_counts_json(ccold, sizeof ccold, &cold);
    gb_counts_json(cwarm, sizeof cwarm, &warm);
    gb_array_json(tl, sizeof tl, t + 1, iters < 100 ? (int)iters : 100, "%.6f"); /* at most 100 */
    agora_gptr_stats_t wg = gb_gptr(&warm), cg = gb_gptr(&cold);
    snprintf(out, sizeof out,
             "{\"program\":\"gptr_matmul\",%s,\"ranks\":%d,\"n\":%zu,\"iterations\":%ld,"
             "\"time_per_iter_s\":%.6f,\"time_per_iter_s_all\":%s,\"first_iter_s\":%.6f,\"mflops\":%.3f,"
             "\"first_iter_mflops\":%.3f,\"hit_rate\":%.6f,\"first_iter_hit_rate\":%.6f,"
             "\"misses_per_iter\":%.1f,\"first_iter_misses\":%" PRIu64 ",\"valid\":%s,"
             "\"counters_first_iter\":%s,\"counters_timed\":%s}",
             cfgjson, p, n, iters, med, tl, t[0], flops / med / 1e6, flops / t[0] / 1e6, gb_hit_rate(&warm),
             gb_hit_rate(&cold), (double)wg.misses / (double)iters, cg.misses, valid ? "true" : "false", ccold, cwarm);
    if (me == 0) {
        printf("gptr_matmul %s: n=%zu ranks=%d first %.4f s (%.2f MFLOPS, %" PRIu64 " misses, hit %.4f); "
               "then %.4f s/iter (%.2f MFLOPS, %.0f misses/iter, hit %.4f)%s\n",
               cfg.scheme, n, p, t[0], flops / t[0] / 1e6, cg.misses, gb_hit_rate(&cold), med, flops / med / 1e6,
               (double)wg.misses / (double)iters, gb_hit_rate(&warm), valid ? "" : "  INVALID");
        if (!valid)
            fprintf(stderr, "VALIDATION FAILED: gptr_matmul %s: %" PRId64 " elements of C wrong\n", cfg.scheme, b64);
    }
    gb_emit(json, out);
    free(t), free(cs);
    GB_CHECK(agora_finalize());
    return valid ? 0 : 1;
}
