/* What an atomic costs in program mode (docs/atomics.md). Built twice from
 * this source with agora_add_program: agora-atomic-cost (gcc's
 * -fno-inline-atomics, as agoracc builds programs: every atomic is a call
 * into Agora) and agora-atomic-cost-inline (the same with -finline-atomics:
 * the hardware instruction, as before the atomic service).
 *
 *   agorarun -n 2 --protocol P build/bin/agora-atomic-cost [ops]
 *
 * Prints one JSON object: ns per operation of
 *   plain_add        a loop with no atomic (the control: same code in both builds)
 *   private_add      atomic_fetch_add on thread-local (private) memory
 *   private_cas      atomic_compare_exchange_strong on thread-local memory
 *   global_add_home  atomic_fetch_add on a global, by main on rank 0 (its home)
 *   global_add_remote the same by a thread on rank 1 (the last rank)
 * and spin: a thread on rank 1 waits with acquire loads for 100 ms until
 * main sets the flag; loads it made per ms of waiting. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static _Thread_local atomic_long private_word;
static _Thread_local long plain_word;
static atomic_long global_word;
static _Alignas(4096) atomic_int flag;
static long ops = 2000000, global_ops = 2000;
static double remote_ns, spin_loads_per_ms;

static double time_plain(long n)
{
    double t0 = now();
    for (long i = 0; i < n; i++) {
        plain_word += i;
        __asm__ volatile("" ::: "memory"); /* keep the loop */
    }
    return (now() - t0) / n * 1e9;
}

static double time_private_add(long n)
{
    double t0 = now();
    for (long i = 0; i < n; i++)
        atomic_fetch_add_explicit(&private_word, 1, memory_order_relaxed);
    return (now() - t0) / n * 1e9;
}

static double time_private_cas(long n)
{
    double t0 = now();
    for (long i = 0; i < n; i++) {
        long e = i;
        atomic_compare_exchange_strong(&private_word, &e, i + 1);
    }
    return (now() - t0) / n * 1e9;
}

static double time_global_add(long n)
{
    double t0 = now();
    for (long i = 0; i < n; i++)
        atomic_fetch_add(&global_word, 1);
    return (now() - t0) / n * 1e9;
}

static void *remote(void *arg)
{
    (void)arg;
    remote_ns = time_global_add(global_ops);
    atomic_store(&flag, 1);
    while (atomic_load_explicit(&flag, memory_order_acquire) != 2)
        ;
    long loads = 0;
    double t0 = now();
    while (atomic_load_explicit(&flag, memory_order_acquire) != 3)
        loads++;
    spin_loads_per_ms = loads / ((now() - t0) * 1e3);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) ops = atol(argv[1]);
    double plain = time_plain(ops);
    double padd = time_private_add(ops);
    double pcas = time_private_cas(ops);
    double home = time_global_add(global_ops);
    pthread_t t;
    if (pthread_create(&t, NULL, remote, NULL) != 0) return 1;
    while (atomic_load(&flag) != 1)
        ;
    atomic_store(&flag, 2);
    struct timespec wait = {0, 100 * 1000 * 1000};
    nanosleep(&wait, NULL);
    atomic_store_explicit(&flag, 3, memory_order_release);
    pthread_join(t, NULL);
    printf("{\"plain_add_ns\": %.2f, \"private_add_ns\": %.2f, \"private_cas_ns\": %.2f, "
           "\"global_add_home_ns\": %.0f, \"global_add_remote_ns\": %.0f, \"spin_loads_per_ms\": %.1f, "
           "\"check\": %ld}\n",
           plain, padd, pcas, home, remote_ns, spin_loads_per_ms, atomic_load(&global_word));
    return atomic_load(&global_word) == 2 * global_ops ? 0 : 1;
}
