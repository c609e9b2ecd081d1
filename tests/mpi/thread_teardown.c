/* agora_finalize waits for the OS threads of agora threads, not only for
 * their functions: after a thread function returns, its OS thread still runs
 * the program's thread-specific data destructors (and libc's teardown),
 * which may touch global memory, for as long as the scheduler delays it.
 * Every thread here leaves a destructor that sleeps (as a delayed thread
 * would) and then reads global memory. agora_finalize must return only after
 * every such destructor of its rank has run; before it waited for them, it
 * returned while they slept, and one that woke after the global range was
 * unmapped died of "Address not mapped".
 *
 * Main on rank 0 starts PER_RANK threads on every rank, joins half of them
 * and leaves the rest to finalize (threads that end right before it).
 *
 * thread_teardown [PER_RANK [DELAY_MS]]                                     */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "check.h"

enum { MAX_PER_RANK = 16, MAX_RANKS = 64 };

/* C globals are per rank: each rank counts the threads it ran. */
static pthread_key_t key;
static long delay_ms = 300;
static atomic_long started, destructed, seen_sum;

static void destructor(void *p)
{
    const long *value = p;
    struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    atomic_fetch_add(&seen_sum, *value); /* global memory, after the thread function returned */
    atomic_fetch_add(&destructed, 1);
}

static void *body(void *arg)
{
    atomic_fetch_add(&started, 1);
    pthread_setspecific(key, arg);
    return NULL;
}

static long value_of(int rank, long j) { return 1000 * (rank + 1) + j; }

int main(int argc, char **argv)
{
    long per_rank = argc > 1 ? atol(argv[1]) : 2;
    if (argc > 2) delay_ms = atol(argv[2]);
    if (pthread_key_create(&key, destructor) != 0) return 2;
    agora_init(&argc, &argv);
    int rank = agora_rank(), n = agora_nranks();
    CHECK(per_rank >= 1 && per_rank <= MAX_PER_RANK && n <= MAX_RANKS && delay_ms >= 0 && delay_ms <= 10000,
          "per rank %ld (1..%d), ranks %d (at most %d), delay %ld ms (0..10000)", per_rank, MAX_PER_RANK, n, MAX_RANKS,
          delay_ms);
    if (rank == 0) {
        long *values = test_malloc(MAX_RANKS * MAX_PER_RANK * sizeof *values);
        CHECK(values, "agora_malloc");
        agora_thread_t th[MAX_RANKS * MAX_PER_RANK];
        for (int r = 0; r < n; r++)
            for (long j = 0; j < per_rank; j++) {
                long k = r * per_rank + j;
                values[k] = value_of(r, j);
                CHECK(agora_thread_create_on(&th[k], r, body, &values[k]) == AGORA_OK, "create on rank %d", r);
            }
        for (long k = 0; k < n * per_rank; k += 2)
            CHECK(agora_thread_join(th[k], NULL) == AGORA_OK, "join %ld", k);
        /* values is not freed: the unjoined threads' destructors still read it */
    }
    int status = agora_finalize();
    long expected_sum = 0;
    for (long j = 0; j < per_rank; j++)
        expected_sum += value_of(rank, j);
    if (status != AGORA_OK || started != per_rank || destructed != started || seen_sum != expected_sum) {
        fprintf(stderr,
                "rank %d: agora_finalize returned %d with %ld of this rank's %ld threads (of %ld expected) past "
                "their thread-specific data destructors (sum read %ld, expected %ld)\n",
                rank, status, (long)destructed, (long)started, per_rank, (long)seen_sum, expected_sum);
        return 1;
    }
    if (rank == 0) printf("PASS thread_teardown on %d ranks\n", n);
    return 0;
}
