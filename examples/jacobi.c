/* Jacobi relaxation of a 2-D 5-point stencil, owner computes: rank r updates
 * the r-th block of rows (the rows block placement homes on it), reads one
 * halo row from each neighbour, and adds its part of the residual to a
 * shared total under a lock. Rank 0 also runs the serial loop and checks
 * that both print the same residual.
 *
 *   agorarun -n 4 ./jacobi [N] [ITERATIONS]                                */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <agora/agora.h>

static double boundary(int i, int j, int n)
{
    return (i == 0 || j == 0 || i == n - 1 || j == n - 1) ? (double)(i + j) / n : 0.0;
}

static double serial_residual(int n, int iters)
{
    double *a = calloc((size_t)n * n, sizeof *a), *b = calloc((size_t)n * n, sizeof *b), res = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            a[i * n + j] = b[i * n + j] = boundary(i, j, n);
    for (int it = 0; it < iters; it++) {
        res = 0;
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++) {
                double v = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
                res += (v - a[i * n + j]) * (v - a[i * n + j]);
                b[i * n + j] = v;
            }
        double *t = a;
        a = b;
        b = t;
    }
    free(a);
    free(b);
    return sqrt(res);
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 512, iters = argc > 2 ? atoi(argv[2]) : 100;
    int me = agora_rank(), np = agora_nranks();
    /* Collective calls: every rank makes them alike and gets the same
     * pointers and lock. Each returns a status; the results come back
     * through the last argument. */
    void *mem[3];
    agora_lock_t lock;
    for (int k = 0; k < 3; k++) {
        size_t bytes = k < 2 ? (size_t)n * n * sizeof(double) : sizeof(double);
        agora_status_t status = agora_mem_alloc(bytes, &mem[k]);
        if (status != AGORA_OK) {
            fprintf(stderr, "agora_mem_alloc(%zu): %s\n", bytes, agora_strerror(status));
            return 1;
        }
    }
    if (agora_lock_init(&lock) != AGORA_OK) return 1;
    double *grid[2] = {mem[0], mem[1]};
    double *total = mem[2];
    agora_lock_t *lk = &lock;
    /* Row block of this rank: the rows whose pages block placement homes here
     * (exact when a row block is a whole number of pages). */
    int lo = (int)((long)n * me / np), hi = (int)((long)n * (me + 1) / np);
    for (int g = 0; g < 2; g++)
        for (int i = lo; i < hi; i++)
            for (int j = 0; j < n; j++)
                grid[g][i * n + j] = boundary(i, j, n);
    agora_barrier();

    double t0 = agora_wtime(), residual = 0;
    for (int it = 0; it < iters; it++) {
        double *a = grid[it % 2], *b = grid[(it + 1) % 2], mine = 0;
        if (me == 0) *total = 0;
        agora_barrier();
        for (int i = lo > 1 ? lo : 1; i < (hi < n - 1 ? hi : n - 1); i++)
            for (int j = 1; j < n - 1; j++) {
                double v = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
                mine += (v - a[i * n + j]) * (v - a[i * n + j]);
                b[i * n + j] = v;
            }
        agora_lock(lk);
        *total += mine;
        agora_unlock(lk);
        agora_barrier();
        residual = sqrt(*total);
    }
    double elapsed = agora_wtime() - t0;

    int status = 0;
    if (me == 0) {
        double expect = serial_residual(n, iters);
        printf("jacobi %dx%d, %d iterations on %d ranks (%s): residual %.9e (serial %.9e) in %.3f s\n", n, n, iters, np,
               agora_protocol_name(), residual, expect, elapsed);
        /* Summation order differs from the serial loop only in the last bits. */
        if (fabs(residual - expect) > 1e-9 * fabs(expect)) {
            fprintf(stderr, "jacobi: residual %.17g differs from serial %.17g\n", residual, expect);
            status = 1;
        }
    }
    agora_finalize();
    return status;
}
