/* A pthreads program whose threads allocate with malloc and hand the
 * memory to each other: each thread builds a linked list of malloc'd nodes
 * and publishes its head in a global table; after a barrier every thread
 * walks its neighbour's list, checks it, copies it into an array it grows
 * with realloc, and frees the neighbour's nodes. strdup'd labels travel
 * the same way. Main checks the totals.
 *
 *   malloc_pass [nodes-per-thread] [threads] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

struct node {
    struct node *next;
    long value;
    char *label;
};

static int nthreads;
static long per_thread = 1000;
static struct node *heads[MAX_THREADS]; /* published lists */
static char *names[MAX_THREADS];        /* strdup'd by each thread */
static long checked[MAX_THREADS];       /* per thread: sum of the neighbour's values */
static long failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t built;

static void fail(const char *what, int id)
{
    pthread_mutex_lock(&failures_lock);
    failures++;
    pthread_mutex_unlock(&failures_lock);
    fprintf(stderr, "thread %d: %s\n", id, what);
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    char buf[32];
    snprintf(buf, sizeof buf, "thread-%d", id);
    names[id] = strdup(buf);
    struct node *head = NULL;
    for (long i = 0; i < per_thread; i++) {
        struct node *nd = malloc(sizeof *nd);
        if (!nd) {
            fail("malloc failed", id);
            return NULL;
        }
        nd->value = (long)id * 1000003L + i;
        nd->label = (i % 100 == 0) ? strdup(buf) : NULL;
        nd->next = head;
        head = nd;
    }
    heads[id] = head;
    pthread_barrier_wait(&built);

    int from = (id + 1) % nthreads;
    snprintf(buf, sizeof buf, "thread-%d", from);
    if (!names[from] || strcmp(names[from], buf) != 0) fail("neighbour's name is wrong", id);
    long *copy = NULL, count = 0, sum = 0;
    for (struct node *nd = heads[from]; nd;) {
        if (count % 64 == 0) {
            long *grown = realloc(copy, sizeof(long) * (size_t)(count + 64));
            if (!grown) {
                fail("realloc failed", id);
                break;
            }
            copy = grown;
        }
        copy[count++] = nd->value;
        sum += nd->value;
        if (nd->label && strcmp(nd->label, buf) != 0) fail("label is wrong", id);
        struct node *next = nd->next;
        free(nd->label);
        free(nd); /* memory another thread allocated */
        nd = next;
    }
    if (count != per_thread) fail("list has the wrong length", id);
    for (long i = 0; i < count; i++) /* the list was built backwards */
        if (copy[i] != (long)from * 1000003L + (per_thread - 1 - i)) {
            fail("copy is wrong", id);
            break;
        }
    free(copy);
    checked[id] = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) per_thread = atol(argv[1]);
    nthreads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (per_thread < 1 || nthreads < 1 || nthreads > MAX_THREADS) {
        fprintf(stderr, "usage: %s [nodes >= 1] [threads 1..%d]\n", argv[0], MAX_THREADS);
        return 2;
    }
    pthread_barrier_init(&built, NULL, nthreads);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t tid[MAX_THREADS];
    for (long t = 0; t < nthreads; t++)
        if (pthread_create(&tid[t], NULL, worker, (void *)t) != 0) {
            perror("pthread_create");
            return 1;
        }
    for (int t = 0; t < nthreads; t++)
        pthread_join(tid[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long total = 0, expect = 0;
    for (int t = 0; t < nthreads; t++) {
        total += checked[t];
        expect += (long)t * 1000003L * per_thread + per_thread * (per_thread - 1) / 2;
        free(names[t]);
    }
    int ok = failures == 0 && total == expect;
    printf("malloc_pass nodes=%ld threads=%d: %s (sum %ld expected %ld, failures %ld)\n", per_thread, nthreads,
           ok ? "ok" : "WRONG", total, expect, failures);
    printf("parallel_s=%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    pthread_barrier_destroy(&built);
    return ok ? 0 : 1;
}
