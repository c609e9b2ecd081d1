/* Locks, lock arrays, barriers and reductions on real ranks, and the
 * errors their misuse must give.                                            */
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
    /* Before init: a clear error, not a crash. */
    CHECK(agora_barrier() == AGORA_ERR_NOT_INITIALIZED, "barrier before init accepted");
    CHECK(test_alloc(64) == NULL, "alloc before init accepted");
    agora_init(&argc, &argv);
    int me = agora_rank(), np = agora_nranks();
    int rounds = argc > 1 ? atoi(argv[1]) : 500;

    /* Mutual exclusion: a read-modify-write counter under one lock. */
    long *counter = test_alloc(sizeof(long));
    agora_lock_t *lk = test_lock_create();
    for (int i = 0; i < rounds; i++) {
        CHECK(agora_lock(lk) == 0, "lock failed");
        long v = *counter;
        *counter = v + 1;
        CHECK(agora_unlock(lk) == 0, "unlock failed");
    }
    agora_barrier();
    CHECK(*counter == (long)rounds * np, "counter %ld, expected %ld", *counter, (long)rounds * np);

    /* A lock array: counters on one page, each guarded by its own lock. */
    enum { K = 8 };
    agora_lock_t *locks = test_lock_array_create(K);
    long *counters = test_alloc(K * sizeof(long));
    for (int i = 0; i < rounds; i++) {
        int k = (i * 7 + me) % K;
        agora_lock(&locks[k]);
        counters[k] += 1;
        agora_unlock(&locks[k]);
    }
    agora_barrier();
    long sum = 0;
    for (int k = 0; k < K; k++)
        sum += counters[k];
    CHECK(sum == (long)rounds * np, "lock array counters sum %ld, expected %ld", sum, (long)rounds * np);

    /* Unlocking a lock not held is an error, and changes nothing. */
    CHECK(agora_unlock(lk) == AGORA_ERR_NOT_HELD, "unlock of a free lock accepted");

    /* Barrier: every rank's write before the barrier is seen after it. */
    long *slots = test_alloc((size_t)np * 4096);
    for (int round = 1; round <= 50; round++) {
        slots[me * 512] = round * 100 + me;
        agora_barrier();
        for (int r = 0; r < np; r++)
            CHECK(slots[r * 512] == round * 100 + r, "round %d: slot %d = %ld", round, r, slots[r * 512]);
        agora_barrier();
    }

    /* Reductions: sum/min/max over int64 and double arrays. */
    int64_t iv[3] = {me + 1, me + 1, me + 1};
    agora_reduce(iv, 1, AGORA_INT64, AGORA_SUM);
    agora_reduce(iv + 1, 1, AGORA_INT64, AGORA_MIN);
    agora_reduce(iv + 2, 1, AGORA_INT64, AGORA_MAX);
    CHECK(iv[0] == (int64_t)np * (np + 1) / 2 && iv[1] == 1 && iv[2] == np, "int64 reduce %lld %lld %lld",
          (long long)iv[0], (long long)iv[1], (long long)iv[2]);
    double dv[1000];
    for (int i = 0; i < 1000; i++)
        dv[i] = 0.1 * (me + 1) * i;
    agora_reduce(dv, 1000, AGORA_DOUBLE, AGORA_SUM);
    for (int i = 0; i < 1000; i++) {
        double expect = 0;
        for (int r = 0; r < np; r++)
            expect += 0.1 * (r + 1) * i;
        CHECK(dv[i] == expect || (dv[i] - expect) < 1e-9 * expect, "double sum [%d] %g vs %g", i, dv[i], expect);
    }
    /* A reduction over a buffer in global memory works too. */
    double *g = test_alloc((size_t)np * 4096);
    g[me * 512] = me;
    agora_reduce(&g[me * 512], 1, AGORA_DOUBLE, AGORA_MAX);
    CHECK(g[me * 512] == np - 1, "global-buffer reduce gave %g", g[me * 512]);
    CHECK(agora_reduce(dv, 1, (agora_type_t)9, AGORA_SUM) == AGORA_ERR_INVALID_ARGUMENT, "bad type accepted");

    PASS("sync");
    agora_finalize();
    CHECK(agora_barrier() == AGORA_ERR_NOT_INITIALIZED, "barrier after finalize accepted");
    return 0;
}
