/* A pthreads program that starts more threads than Agora has slots, as a
 * program on one machine may start more threads than cores (issue 26): 4
 * workers plus main on `agorarun -n 2` (2 slots). Each worker adds to a
 * mutex-protected sum, meets the others at a pthread barrier whose count
 * (4) is above the slots, and checks every worker's slot after it. */
#include <pthread.h>
#include <stdio.h>

#define WORKERS 4
#define ADDS 1000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;
static long sum;
static long slot[WORKERS];

static void *worker(void *arg)
{
    long me = (long)arg;
    for (int i = 0; i < ADDS; i++) {
        pthread_mutex_lock(&lock);
        sum++;
        pthread_mutex_unlock(&lock);
    }
    slot[me] = me + 1;
    pthread_barrier_wait(&barrier);
    long bad = 0;
    for (int w = 0; w < WORKERS; w++)
        bad += slot[w] != w + 1;
    return (void *)bad;
}

int main(void)
{
    pthread_t t[WORKERS];
    if (pthread_barrier_init(&barrier, NULL, WORKERS) != 0) {
        printf("FAIL: pthread_barrier_init(%d)\n", WORKERS);
        return 1;
    }
    for (long w = 0; w < WORKERS; w++)
        if (pthread_create(&t[w], NULL, worker, (void *)w) != 0) {
            printf("FAIL: pthread_create of worker %ld\n", w);
            return 1;
        }
    long bad = 0;
    for (int w = 0; w < WORKERS; w++) {
        void *r;
        pthread_join(t[w], &r);
        bad += (long)r;
    }
    if (sum != WORKERS * ADDS || bad) {
        printf("FAIL: sum %ld of %d, %ld slots unseen after the barrier\n", sum, WORKERS * ADDS, bad);
        return 1;
    }
    printf("PASS program beyond_slots\n");
    return 0;
}
