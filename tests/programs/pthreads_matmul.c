/* A pthreads program in the style of classic teaching/benchmark codes: the
 * shared state is in globals and on main's stack, threads are created with
 * pthread_create and synchronise with a mutex, a barrier and a condition
 * variable. Nothing in it knows about Agora.
 *
 *   pthreads_matmul [n] [threads]
 *
 * Phase 1: C = A * B, rows split in blocks over the threads.
 * Phase 2: each thread sums its rows of C; the sums meet under a mutex.
 * The last thread to finish signals main through a condition variable.
 * Main checks every element against its own serial product. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static int n = 256;
static int nthreads;
static double *A, *B, *C; /* malloc'd by main, reached through globals */
static double total;      /* sum of C, accumulated under total_lock */
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t phase;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static int finished;     /* threads done, under done_lock */
static int serial_count; /* barrier waits that returned PTHREAD_BARRIER_SERIAL_THREAD */

struct task { /* one per thread, on main's stack */
    int id;
    int first_row, rows;
    double my_sum;
};

static int close_to(double a, double b)
{
    double d = a > b ? a - b : b - a, m = b < 0 ? -b : b;
    return d <= 1e-9 * (1 + m);
}

static void *worker(void *arg)
{
    struct task *t = arg;
    for (int i = t->first_row; i < t->first_row + t->rows; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++)
                s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    int r = pthread_barrier_wait(&phase);
    if (r == PTHREAD_BARRIER_SERIAL_THREAD)
        serial_count++;
    else if (r != 0) {
        fprintf(stderr, "barrier failed: %d\n", r);
        exit(1);
    }

    double sum = 0;
    for (int i = t->first_row; i < t->first_row + t->rows; i++)
        for (int j = 0; j < n; j++)
            sum += C[i * n + j];
    t->my_sum = sum;
    pthread_mutex_lock(&total_lock);
    total += sum;
    pthread_mutex_unlock(&total_lock);

    pthread_mutex_lock(&done_lock);
    if (++finished == nthreads) pthread_cond_signal(&all_done);
    pthread_mutex_unlock(&done_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) n = atoi(argv[1]);
    nthreads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1 || nthreads < 1 || nthreads > MAX_THREADS) {
        fprintf(stderr, "usage: %s [n >= 1] [threads 1..%d]\n", argv[0], MAX_THREADS);
        return 2;
    }
    A = malloc(sizeof(double) * n * n);
    B = malloc(sizeof(double) * n * n);
    C = calloc((size_t)n * n, sizeof(double));
    if (!A || !B || !C) {
        perror("malloc");
        return 1;
    }
    for (int i = 0; i < n * n; i++) {
        A[i] = (double)(i % 7) - 3.0;
        B[i] = (double)((i * 5) % 11) * 0.5;
    }
    pthread_barrier_init(&phase, NULL, nthreads);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t tid[MAX_THREADS];
    struct task tasks[MAX_THREADS];
    int base = n / nthreads, extra = n % nthreads, row = 0;
    for (int t = 0; t < nthreads; t++) {
        tasks[t].id = t;
        tasks[t].first_row = row;
        tasks[t].rows = base + (t < extra);
        tasks[t].my_sum = 0;
        row += tasks[t].rows;
        if (pthread_create(&tid[t], NULL, worker, &tasks[t]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    pthread_mutex_lock(&done_lock);
    while (finished < nthreads)
        pthread_cond_wait(&all_done, &done_lock);
    pthread_mutex_unlock(&done_lock);
    for (int t = 0; t < nthreads; t++)
        pthread_join(tid[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double parallel_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

    /* Check every element and the per-thread sums against a serial product. */
    long bad = 0;
    double expect_total = 0, sums = 0;
    double *row_buf = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++)
                s += A[i * n + k] * B[k * n + j];
            row_buf[j] = s;
            if (C[i * n + j] != s) bad++;
        }
        for (int j = 0; j < n; j++)
            expect_total += row_buf[j];
    }
    for (int t = 0; t < nthreads; t++)
        sums += tasks[t].my_sum;
    free(row_buf);
    int ok = bad == 0 && serial_count == 1 && finished == nthreads && close_to(total, expect_total) &&
             close_to(sums, expect_total);
    printf("matmul n=%d threads=%d: %s (wrong elements %ld, serial waiters %d, total %.6e expected %.6e)\n", n,
           nthreads, ok ? "ok" : "WRONG", bad, serial_count, total, expect_total);
    printf("parallel_s=%.6f\n", parallel_s);
    pthread_barrier_destroy(&phase);
    free(A);
    free(B);
    free(C);
    return ok ? 0 : 1;
}
