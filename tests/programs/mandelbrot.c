/* A pthreads program in the common "work queue" style: threads take rows
 * of a Mandelbrot image from a shared counter under a mutex, write them
 * into a malloc'd image, and count the points inside the set per thread in
 * a global array; main waits on a condition variable until every row is
 * done, then joins and checks the image against its own serial pass.
 *
 *   mandelbrot [size] [threads] [max-iterations] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static int size = 512, max_iter = 256, nthreads;
static unsigned char *image;    /* size x size, malloc'd by main */
static int next_row, rows_done; /* under queue_lock */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_rows = PTHREAD_COND_INITIALIZER;
static long inside[MAX_THREADS]; /* per thread: points in the set */

static int escape(int x, int y)
{
    double cr = -2.0 + 2.5 * x / size, ci = -1.25 + 2.5 * y / size, zr = 0, zi = 0;
    int i = 0;
    while (i < max_iter && zr * zr + zi * zi <= 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2 * zr * zi + ci;
        zr = t;
        i++;
    }
    return i;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        int y = next_row < size ? next_row++ : -1;
        pthread_mutex_unlock(&queue_lock);
        if (y < 0) break;
        for (int x = 0; x < size; x++) {
            int it = escape(x, y);
            image[(size_t)y * size + x] = (unsigned char)(it & 0xff);
            if (it == max_iter) inside[id]++;
        }
        pthread_mutex_lock(&queue_lock);
        if (++rows_done == size) pthread_cond_signal(&all_rows);
        pthread_mutex_unlock(&queue_lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) size = atoi(argv[1]);
    nthreads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (argc > 3) max_iter = atoi(argv[3]);
    if (size < 1 || nthreads < 1 || nthreads > MAX_THREADS || max_iter < 1) {
        fprintf(stderr, "usage: %s [size >= 1] [threads 1..%d] [max-iterations >= 1]\n", argv[0], MAX_THREADS);
        return 2;
    }
    image = malloc((size_t)size * size);
    if (!image) {
        perror("malloc");
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t tid[MAX_THREADS];
    for (long t = 0; t < nthreads; t++)
        if (pthread_create(&tid[t], NULL, worker, (void *)t) != 0) {
            perror("pthread_create");
            return 1;
        }
    pthread_mutex_lock(&queue_lock);
    while (rows_done < size)
        pthread_cond_wait(&all_rows, &queue_lock);
    pthread_mutex_unlock(&queue_lock);
    for (int t = 0; t < nthreads; t++)
        pthread_join(tid[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    long total_inside = 0, expect_inside = 0, wrong = 0, checksum = 0;
    for (int t = 0; t < nthreads; t++)
        total_inside += inside[t];
    for (int y = 0; y < size; y++)
        for (int x = 0; x < size; x++) {
            int it = escape(x, y);
            if (it == max_iter) expect_inside++;
            if (image[(size_t)y * size + x] != (unsigned char)(it & 0xff)) wrong++;
            checksum += image[(size_t)y * size + x];
        }
    int ok = wrong == 0 && total_inside == expect_inside;
    printf("mandelbrot size=%d threads=%d: %s (inside %ld expected %ld, checksum %ld, wrong pixels %ld)\n", size,
           nthreads, ok ? "ok" : "WRONG", total_inside, expect_inside, checksum, wrong);
    printf("parallel_s=%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    free(image);
    return ok ? 0 : 1;
}
