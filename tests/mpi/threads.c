/* Several application threads per rank under sc: they fault concurrently on
 * the same pages and on different pages, and contend for locks with the
 * threads of other ranks.                                                   */
#include <pthread.h>
#include <string.h>

#include "check.h"

#define PAGE 4096
enum { THREADS = 2, ROUNDS = 200 };

static long *shared_words, *counter;
static agora_lock_t *lk;
static pthread_barrier_t local_barrier;

static void *worker(void *arg)
{
    int t = (int)(long)arg, me = agora_rank(), np = agora_nranks();
    int slot = me * THREADS + t, nslots = np * THREADS;
    for (int round = 1; round <= ROUNDS; round++) {
        /* Different words of the same few pages: every thread of every rank
         * writes its own word, so the pages ping-pong between ranks. */
        shared_words[slot * 8] = round * 1000 + slot;
        agora_lock(lk);
        *counter += 1;
        agora_unlock(lk);
        pthread_barrier_wait(&local_barrier);
        if (t == 0) agora_barrier();
        pthread_barrier_wait(&local_barrier);
        for (int s = 0; s < nslots; s++)
            CHECK(shared_words[s * 8] == round * 1000 + s, "round %d: slot %d holds %ld", round, s,
                  shared_words[s * 8]);
        pthread_barrier_wait(&local_barrier);
        if (t == 0) agora_barrier();
        pthread_barrier_wait(&local_barrier);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    shared_words = test_alloc_placed(2 * PAGE, AGORA_PLACE_CYCLIC, 0);
    counter = test_alloc(sizeof(long));
    lk = test_lock_create();
    pthread_barrier_init(&local_barrier, NULL, THREADS);
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    agora_barrier();
    long expect = (long)ROUNDS * THREADS * agora_nranks();
    CHECK(*counter == expect, "counter %ld, expected %ld", *counter, expect);
    PASS("threads");
    agora_finalize();
    return 0;
}
