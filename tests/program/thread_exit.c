/* agora_thread_exit in a program built in program mode: threads on every
 * rank end from deep inside nested calls with a value their joiner gets;
 * then main ends with agora_thread_exit while threads still run: the job
 * ends (status 0) once they have, and the last one prints the result.
 *
 * thread_exit [THREADS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <agora/agora.h>

#include "../mpi/check.h"

enum { MAX = 32 };
long reached_after_exit; /* must stay 0 */
agora_lock_t lock;
int late_total, late_done;
long late_sum;

static void deep(long depth, long value)
{
    volatile long frame[64];
    frame[0] = depth;
    if (depth == 0) {
        agora_thread_exit((void *)(intptr_t)value);
        reached_after_exit++;
        return;
    }
    deep(depth - 1, value + frame[0] * 0);
    reached_after_exit++;
}

static void *early(void *arg)
{
    long i = (long)(intptr_t)arg;
    deep(50 + i, i * 11 + 1);
    reached_after_exit++;
    return NULL;
}

/* Runs after main has ended with agora_thread_exit. */
static void *late(void *arg)
{
    long i = (long)(intptr_t)arg;
    double t0 = agora_wtime();
    while (agora_wtime() - t0 < 0.3) {
    }
    agora_lock(&lock);
    late_sum += i;
    int done = ++late_done;
    agora_unlock(&lock);
    if (done == late_total) {
        long want = (long)late_total * (late_total - 1) / 2;
        if (late_sum != want || reached_after_exit != 0) {
            fprintf(stderr, "late threads: sum %ld (want %ld), reached after exit %ld\n", late_sum, want,
                    reached_after_exit);
            exit(1);
        }
        printf("PASS program thread_exit: %d late threads on %d ranks\n", late_total, agora_nranks());
        fflush(stdout);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2 * agora_nranks();
    CHECK(n >= 1 && n <= MAX, "bad thread count %d", n);
    CHECK(agora_lock_init(&lock) == AGORA_OK, "agora_lock_init");
    agora_thread_t t[MAX];
    for (long i = 0; i < n; i++)
        CHECK(agora_thread_create(&t[i], early, (void *)(intptr_t)i) == AGORA_OK, "create");
    for (long i = 0; i < n; i++) {
        void *ret;
        CHECK(agora_thread_join(t[i], &ret) == AGORA_OK, "join");
        CHECK((intptr_t)ret == i * 11 + 1, "thread %ld returned %ld", i, (long)(intptr_t)ret);
    }
    CHECK(reached_after_exit == 0, "code after agora_thread_exit ran (%ld)", reached_after_exit);
    late_total = n;
    for (long i = 0; i < n; i++)
        CHECK(agora_thread_create(&t[i], late, (void *)(intptr_t)i) == AGORA_OK, "create");
    agora_thread_exit(NULL); /* the job ends once the late threads have */
    reached_after_exit++;
    printf("FAIL: main continued after agora_thread_exit\n");
    return 1;
}
