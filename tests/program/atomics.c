/* C11 <stdatomic.h> and GNU __atomic/__sync read-modify-writes on shared
 * globals from threads on several ranks (issue 26, docs/atomics.md). Each
 * phase checks an exact result that a lost update or a stale read breaks:
 *
 *   counter  atomic_fetch_add (and _sub, _or, exchange) on one atomic_long
 *   caslock  a spin lock built from atomic_compare_exchange_weak and an
 *            atomic_store release, protecting a plain counter
 *   flag     a spin lock built from atomic_flag, another from
 *            __sync_lock_test_and_set / __sync_lock_release
 *   sync     __sync_fetch_and_add, __sync_val_compare_and_swap,
 *            __sync_bool_compare_and_swap, __atomic_add_fetch
 *   message  message passing: plain data, then a release store of a round
 *            number; the other side waits with acquire loads, then reads
 *            the data (the release/acquire pairing across ranks)
 *
 * 4 workers on 2 ranks x 2 threads (main waits in pthread_join): two workers
 * on each rank. The message phase pairs worker 0 with worker 1 (on
 * different ranks).
 * Usage: atomics [phase...] (default: every phase). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define WORKERS 4
#define ADDS 100
#define ROUNDS 30
#define WORDS 64

static atomic_long counter;
static atomic_int small_sub = WORKERS * ADDS;
static atomic_uint bits;
static _Atomic short short_count;

static atomic_int cas_lock;
static long cas_protected;

static atomic_flag flag_lock = ATOMIC_FLAG_INIT;
static long flag_protected;
static int sync_lock;
static long sync_protected;

static long sync_counter;
static int sync_cas_counter;
static long atomic_builtin_counter;

/* The message phase: data and the flags on pages of their own. */
static struct {
    _Alignas(4096) int data[WORDS];
    _Alignas(4096) atomic_int ready;
    _Alignas(4096) atomic_int taken;
} box;
static long message_errors;

static pthread_barrier_t barrier;
static const char *phase;

static void counter_phase(long me)
{
    for (int i = 0; i < ADDS; i++) {
        atomic_fetch_add(&counter, 2);
        atomic_fetch_sub_explicit(&small_sub, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&short_count, 1, memory_order_acq_rel);
    }
    atomic_fetch_or(&bits, 1u << me);
}

static void caslock_phase(void)
{
    for (int i = 0; i < ADDS; i++) {
        int expected = 0;
        while (
            !atomic_compare_exchange_weak_explicit(&cas_lock, &expected, 1, memory_order_acquire, memory_order_relaxed))
            expected = 0;
        cas_protected++;
        atomic_store_explicit(&cas_lock, 0, memory_order_release);
    }
}

static void flag_phase(void)
{
    for (int i = 0; i < ADDS; i++) {
        while (atomic_flag_test_and_set_explicit(&flag_lock, memory_order_acquire))
            ;
        flag_protected++;
        atomic_flag_clear_explicit(&flag_lock, memory_order_release);
        while (__sync_lock_test_and_set(&sync_lock, 1))
            ;
        sync_protected++;
        __sync_lock_release(&sync_lock);
    }
}

static void sync_phase(void)
{
    for (int i = 0; i < ADDS; i++) {
        __sync_fetch_and_add(&sync_counter, 1);
        int seen;
        do
            seen = sync_cas_counter;
        while (__sync_val_compare_and_swap(&sync_cas_counter, seen, seen + 1) != seen);
        long old;
        do
            old = __atomic_load_n(&atomic_builtin_counter, __ATOMIC_RELAXED);
        while (!__sync_bool_compare_and_swap(&atomic_builtin_counter, old, old + 1));
        __atomic_add_fetch(&atomic_builtin_counter, 1, __ATOMIC_SEQ_CST);
    }
}

/* Worker 0 produces, worker 1 consumes and answers on `taken`. */
static void message_phase(long me)
{
    if (me > 1) return;
    for (int round = 1; round <= ROUNDS; round++) {
        if (me == 0) {
            for (int w = 0; w < WORDS; w++)
                box.data[w] = round * 1000 + w;
            atomic_store_explicit(&box.ready, round, memory_order_release);
            while (atomic_load_explicit(&box.taken, memory_order_acquire) != round)
                ;
        } else {
            while (atomic_load_explicit(&box.ready, memory_order_acquire) != round)
                ;
            for (int w = 0; w < WORDS; w++)
                if (box.data[w] != round * 1000 + w) {
                    if (message_errors++ == 0)
                        printf("message round %d: data[%d] = %d, expected %d\n", round, w, box.data[w],
                               round * 1000 + w);
                }
            atomic_store_explicit(&box.taken, round, memory_order_release);
        }
    }
}

static bool wants(const char *name) { return phase == NULL || strcmp(phase, name) == 0; }

/* Every rank reads the variables first, so that each holds a copy before
 * the phases start: without cross-rank atomics, each rank would then update
 * its own copy, whatever the timing. */
static long warm_up(void)
{
    return atomic_load_explicit(&counter, memory_order_relaxed) + cas_protected + flag_protected + sync_protected +
           sync_counter + box.data[0] + atomic_load_explicit(&box.ready, memory_order_relaxed);
}

static void *worker(void *arg)
{
    long me = (long)arg;
    volatile long sink = warm_up();
    (void)sink;
    pthread_barrier_wait(&barrier);
    if (wants("counter")) counter_phase(me);
    pthread_barrier_wait(&barrier);
    if (wants("caslock")) caslock_phase();
    pthread_barrier_wait(&barrier);
    if (wants("flag")) flag_phase();
    pthread_barrier_wait(&barrier);
    if (wants("sync")) sync_phase();
    pthread_barrier_wait(&barrier);
    if (wants("message")) message_phase(me);
    return NULL;
}

static int check(const char *name, long got, long want)
{
    if (!wants(name)) return 0;
    if (got == want) return 0;
    printf("FAIL %s: %ld, expected %ld\n", name, got, want);
    return 1;
}

int main(int argc, char **argv)
{
    phase = argc > 1 ? argv[1] : NULL;
    pthread_barrier_init(&barrier, NULL, WORKERS);
    pthread_t t[WORKERS];
    for (long w = 0; w < WORKERS; w++)
        if (pthread_create(&t[w], NULL, worker, (void *)w) != 0) {
            printf("FAIL: pthread_create of worker %ld\n", w);
            return 1;
        }
    for (int w = 0; w < WORKERS; w++)
        pthread_join(t[w], NULL);
    int failed = 0;
    failed += check("counter", atomic_load(&counter), 2L * WORKERS * ADDS);
    failed += check("counter", atomic_load(&small_sub), 0);
    failed += check("counter", atomic_load(&short_count), WORKERS * ADDS);
    failed += check("counter", atomic_load(&bits), (1 << WORKERS) - 1);
    failed += check("caslock", cas_protected, (long)WORKERS * ADDS);
    failed += check("flag", flag_protected, (long)WORKERS * ADDS);
    failed += check("flag", sync_protected, (long)WORKERS * ADDS);
    failed += check("sync", sync_counter, (long)WORKERS * ADDS);
    failed += check("sync", sync_cas_counter, (long)WORKERS * ADDS);
    failed += check("sync", atomic_builtin_counter, 2L * WORKERS * ADDS);
    failed += check("message", message_errors, 0);
    if (failed) return 1;
    printf("PASS program atomics\n");
    return 0;
}
