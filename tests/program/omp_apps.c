/* Application-style OpenMP kernels, unmodified, each validated against the
 * same computation done serially by main: a Jacobi stencil with a max
 * reduction of the change, a sparse (tridiagonal) conjugate gradient with
 * several reductions per iteration, a Monte Carlo estimate with per-thread
 * generator state (firstprivate seeds, rand_r), a bucket sort whose
 * threads merge their counts in a critical section, a task-parallel
 * recursion, and an ordered prefix. Prints "PASS program omp_apps". */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failure_count.h"

#define GRID 128

static double grid_a[GRID][GRID], grid_b[GRID][GRID];

/* Jacobi sweeps; returns the last sweep's largest change. */
static double jacobi(int sweeps, int parallel)
{
    for (int i = 0; i < GRID; i++)
        for (int j = 0; j < GRID; j++)
            grid_a[i][j] = (i == 0) ? 100.0 : 0.0;
    memcpy(grid_b, grid_a, sizeof grid_a);
    double change = 0;
    for (int s = 0; s < sweeps; s++) {
        change = 0;
#pragma omp parallel for reduction(max : change) schedule(static) if (parallel)
        for (int i = 1; i < GRID - 1; i++)
            for (int j = 1; j < GRID - 1; j++) {
                grid_b[i][j] = 0.25 * (grid_a[i - 1][j] + grid_a[i + 1][j] + grid_a[i][j - 1] + grid_a[i][j + 1]);
                double d = fabs(grid_b[i][j] - grid_a[i][j]);
                if (d > change) change = d;
            }
#pragma omp parallel for schedule(static) if (parallel)
        for (int i = 1; i < GRID - 1; i++)
            memcpy(&grid_a[i][1], &grid_b[i][1], (GRID - 2) * sizeof(double));
    }
    return change;
}

/* CG on the tridiagonal system (4 on the diagonal, -1 beside): residual norm after k iterations. */
#define CG_N 4096
static double x[CG_N], r[CG_N], p[CG_N], q[CG_N], b[CG_N];

static double cg(int iterations, int parallel)
{
    for (int i = 0; i < CG_N; i++) {
        b[i] = 1.0 + (i % 7);
        x[i] = 0;
        r[i] = b[i];
        p[i] = b[i];
    }
    double rho = 0;
#pragma omp parallel for reduction(+ : rho) if (parallel)
    for (int i = 0; i < CG_N; i++)
        rho += r[i] * r[i];
    for (int k = 0; k < iterations; k++) {
        double pq = 0;
#pragma omp parallel for reduction(+ : pq) schedule(static, 64) if (parallel)
        for (int i = 0; i < CG_N; i++) {
            q[i] = 4 * p[i] - (i > 0 ? p[i - 1] : 0) - (i < CG_N - 1 ? p[i + 1] : 0);
            pq += p[i] * q[i];
        }
        double alpha = rho / pq, rho_new = 0;
#pragma omp parallel for reduction(+ : rho_new) if (parallel)
        for (int i = 0; i < CG_N; i++) {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
            rho_new += r[i] * r[i];
        }
        double beta = rho_new / rho;
        rho = rho_new;
#pragma omp parallel for if (parallel)
        for (int i = 0; i < CG_N; i++)
            p[i] = r[i] + beta * p[i];
    }
    return sqrt(rho);
}

/* Monte Carlo: samples per block from a generator seeded by the block. */
static long monte_carlo(int blocks, int per_block, int parallel)
{
    long inside = 0;
#pragma omp parallel for reduction(+ : inside) schedule(dynamic) if (parallel)
    for (int blk = 0; blk < blocks; blk++) {
        unsigned seed = 12345u + (unsigned)blk;
        for (int s = 0; s < per_block; s++) {
            double u = rand_r(&seed) / (double)RAND_MAX, v = rand_r(&seed) / (double)RAND_MAX;
            inside += u * u + v * v <= 1.0;
        }
    }
    return inside;
}

/* Bucket counts merged under critical. */
#define KEYS 20000
#define BUCKETS 64
static int keys[KEYS];
static long bucket_count[BUCKETS];

static void bucket_sort_counts(int parallel)
{
    memset(bucket_count, 0, sizeof bucket_count);
#pragma omp parallel if (parallel)
    {
        long mine[BUCKETS] = {0};
#pragma omp for schedule(guided)
        for (int i = 0; i < KEYS; i++)
            mine[keys[i] % BUCKETS]++;
#pragma omp critical(merge)
        for (int k = 0; k < BUCKETS; k++)
            bucket_count[k] += mine[k];
    }
}

static long fib(int n)
{
    if (n < 2) return n;
    long a, b2;
#pragma omp task shared(a)
    a = fib(n - 1);
#pragma omp task shared(b2)
    b2 = fib(n - 2);
#pragma omp taskwait
    return a + b2;
}

int main(void)
{
    int team = omp_get_max_threads();
    double serial_change = jacobi(20, 0), parallel_change = jacobi(20, 1);
    CHECK(serial_change == parallel_change, "jacobi: change %.17g, serially %.17g", parallel_change, serial_change);
    double serial_norm = cg(15, 0), parallel_norm = cg(15, 1);
    CHECK(fabs(serial_norm - parallel_norm) <= 1e-9 * serial_norm, "cg: residual %.17g, serially %.17g", parallel_norm,
          serial_norm);
    long serial_inside = monte_carlo(64, 2000, 0), parallel_inside = monte_carlo(64, 2000, 1);
    CHECK(serial_inside == parallel_inside, "monte carlo: %ld inside, serially %ld", parallel_inside, serial_inside);
    for (int i = 0; i < KEYS; i++)
        keys[i] = (int)((i * 2654435761u) % 100000);
    long serial_counts[BUCKETS] = {0};
    for (int i = 0; i < KEYS; i++)
        serial_counts[keys[i] % BUCKETS]++;
    bucket_sort_counts(1);
    for (int k = 0; k < BUCKETS; k++)
        CHECK(bucket_count[k] == serial_counts[k], "bucket %d: %ld keys, serially %ld", k, bucket_count[k],
              serial_counts[k]);
    long f = 0;
#pragma omp parallel
#pragma omp single
    f = fib(18);
    CHECK(f == 2584, "fib(18) with tasks: %ld", f);
    /* Ordered prefix sum: each iteration adds to the running total in order. */
    static long prefix[1000];
    long running = 0;
#pragma omp parallel for ordered schedule(dynamic, 7)
    for (int i = 0; i < 1000; i++) {
        long value = (long)i * i;
#pragma omp ordered
        {
            running += value;
            prefix[i] = running;
        }
    }
    long expect = 0;
    for (int i = 0; i < 1000; i++) {
        expect += (long)i * i;
        CHECK(prefix[i] == expect, "ordered prefix %d: %ld, expected %ld", i, prefix[i], expect);
    }
    if (failures) {
        printf("FAIL program omp_apps: %d checks failed\n", failures);
        return 1;
    }
    printf("PASS program omp_apps: %d threads\n", team);
    return 0;
}
