/* Global allocation on real ranks: collective (same pointer, placement
 * homes), non-collective from every rank, remote free, and the errors. */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define PAGE 4096

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    int me = agora_rank(), np = agora_nranks();

    /* Collective: identical pointer on every rank, page aligned, zeroed. */
    size_t pages = 4 * (size_t)np;
    char *blk = test_alloc(pages * PAGE);
    int64_t p[2] = {(int64_t)(uintptr_t)blk, -(int64_t)(uintptr_t)blk};
    agora_reduce(p, 2, AGORA_INT64, AGORA_MAX);
    CHECK(p[0] == -p[1], "ranks got different pointers");
    CHECK(((uintptr_t)blk % PAGE) == 0, "not page aligned");
    CHECK(agora_is_global(blk) && !agora_is_global(&me), "is_global wrong");

    /* Block placement: rank r homes the r-th quarter... r-th 1/N. */
    for (size_t i = 0; i < pages; i++)
        CHECK(agora_home_of(blk + i * PAGE) == (int)(i * np / pages), "block page %zu homed on %d", i,
              agora_home_of(blk + i * PAGE));
    char *cyc = test_alloc_placed(pages * PAGE, AGORA_PLACE_CYCLIC, 0);
    for (size_t i = 0; i < pages; i++)
        CHECK(agora_home_of(cyc + i * PAGE) == (int)(i % np), "cyclic page %zu homed on %d", i,
              agora_home_of(cyc + i * PAGE));
    char *one = test_alloc_placed(3 * PAGE, AGORA_PLACE_RANK, np - 1);
    for (int i = 0; i < 3; i++)
        CHECK(agora_home_of(one + i * PAGE) == np - 1, "rank placement");
    CHECK(test_alloc_placed(PAGE, AGORA_PLACE_RANK, np) == NULL, "placement on a rank that does not exist accepted");

    /* Everyone writes its own page, then reads everyone's. */
    for (size_t i = 0; i < pages; i++)
        CHECK(blk[i * PAGE] == 0, "not zeroed");
    agora_barrier(); /* everyone has checked before anyone writes */
    blk[me * PAGE] = (char)(me + 1);
    agora_barrier();
    for (int r = 0; r < np; r++)
        CHECK(blk[r * PAGE] == r + 1, "page of rank %d holds %d", r, blk[r * PAGE]);

    /* Non-collective: each rank allocates, publishes the pointer; others use it. */
    long **ptrs = test_alloc((size_t)np * sizeof(long *));
    long *mine = test_malloc(1000 * sizeof(long));
    CHECK(mine != NULL && agora_home_of(mine) == me, "agora_malloc homed on %d", agora_home_of(mine));
    for (int i = 0; i < 1000; i++)
        mine[i] = me * 100000 + i;
    ptrs[me] = mine;
    agora_barrier();
    for (int r = 0; r < np; r++)
        for (int i = 0; i < 1000; i += 97)
            CHECK(ptrs[r][i] == r * 100000 + i, "malloc'd data of rank %d", r);
    agora_barrier();
    /* Free another rank's block (remote free), then double free it. */
    long *victim = ptrs[(me + 1) % np];
    agora_barrier();
    CHECK(agora_mem_free(victim) == 0, "remote free failed");
    agora_barrier();
    CHECK(agora_mem_free(victim) == AGORA_ERR_BAD_POINTER, "double free not detected");
    CHECK(agora_mem_free(&me) == AGORA_ERR_BAD_POINTER, "free of a stack pointer not detected");
    CHECK(agora_mem_free(blk) == AGORA_ERR_BAD_POINTER, "free of collective memory not detected");
    long *x = test_malloc(64);
    CHECK(agora_mem_free((char *)x + 8) == AGORA_ERR_BAD_POINTER, "free of an interior pointer not detected");
    CHECK(agora_mem_free(x) == 0, "free");

    /* Exhaustion: NULL on every rank, and the runtime keeps working. */
    /* 32 TiB: more than any range's collective region or heap (at most 40T). */
    CHECK(test_alloc((size_t)1 << 45) == NULL, "32 TiB collective allocation succeeded");
    CHECK(test_malloc((size_t)1 << 45) == NULL, "32 TiB agora_malloc succeeded");
    char *after = test_alloc(PAGE);
    CHECK(after != NULL, "allocation after exhaustion failed");
    agora_barrier();

    /* Sizes whose round-up to pages or to 64 bytes wraps past 2^64 must fail
     * like any other too-large size (they used to return a one-page block
     * that the next allocation overlapped). Every rank writes a pattern into
     * a block allocated after each failure and checks all of it, plus the
     * blocks allocated before. */
    const size_t huge[] = {SIZE_MAX,      SIZE_MAX - 1,     SIZE_MAX - PAGE + 2,
                           SIZE_MAX - 63, SIZE_MAX / 2 + 1, ((size_t)1 << 63) + PAGE};
    const int nhuge = (int)(sizeof huge / sizeof huge[0]);
    long *keep[3 * 6];
    int kept = 0;
    for (int k = 0; k < nhuge; k++) {
        CHECK(test_alloc(huge[k]) == NULL, "test_alloc(%zu) succeeded", huge[k]);
        CHECK(test_alloc_placed(huge[k], AGORA_PLACE_CYCLIC, 0) == NULL, "cyclic test_alloc_placed(%zu) succeeded",
              huge[k]);
        CHECK(test_alloc_placed(huge[k], AGORA_PLACE_RANK, np - 1) == NULL, "test_alloc_placed(%zu, rank) succeeded",
              huge[k]);
        CHECK(test_malloc(huge[k]) == NULL, "test_malloc(%zu) succeeded", huge[k]);
        /* A collective block one page per rank (each rank writes its own
         * page) and a private one, both filled with a pattern. */
        long *c = test_alloc((size_t)np * PAGE);
        long *m = test_malloc(2 * PAGE);
        CHECK(c != NULL && m != NULL, "allocation after test_alloc(%zu) failed", huge[k]);
        size_t per = PAGE / sizeof(long);
        for (size_t i = 0; i < per; i++)
            c[me * per + i] = ((long)k << 40) | ((long)me << 20) | (long)i;
        for (size_t i = 0; i < 2 * per; i++)
            m[i] = ~(((long)k << 40) | ((long)me << 20) | (long)i);
        keep[kept++] = c;
        keep[kept++] = m;
    }
    agora_barrier();
    for (int k = 0; k < nhuge; k++) {
        long *c = keep[2 * k], *m = keep[2 * k + 1];
        size_t per = PAGE / sizeof(long);
        for (int r = 0; r < np; r++)
            for (size_t i = 0; i < per; i++)
                CHECK(c[r * per + i] == (((long)k << 40) | ((long)r << 20) | (long)i),
                      "collective block %d, rank %d's word %zu overwritten", k, r, i);
        for (size_t i = 0; i < 2 * per; i++)
            CHECK(m[i] == ~(((long)k << 40) | ((long)me << 20) | (long)i), "malloc'd block %d word %zu overwritten", k,
                  i);
    }
    agora_barrier();

    /* Other sizes that wrap: a reduction of more 8-byte values than fit in
     * memory, and more lock handles than fit; the next ones work alike on
     * every rank (a lock counter through a lock created after the failure). */
    int64_t v[1] = {1};
    CHECK(agora_reduce(v, SIZE_MAX / 8 + 1, AGORA_INT64, AGORA_SUM) == AGORA_ERR_INVALID_ARGUMENT,
          "huge reduce accepted");
    CHECK(test_lock_array_create(SIZE_MAX) == NULL, "test_lock_array_create(SIZE_MAX) succeeded");
    CHECK(test_lock_array_create(SIZE_MAX / 2) == NULL, "test_lock_array_create(SIZE_MAX / 2) succeeded");
    agora_lock_t *lk = test_lock_create();
    long *counter = test_alloc(sizeof(long));
    for (int i = 0; i < 100; i++) {
        agora_lock(lk);
        (*counter)++;
        agora_unlock(lk);
    }
    agora_reduce(v, 1, AGORA_INT64, AGORA_SUM);
    CHECK(v[0] == np, "reduce after the huge one gave %lld", (long long)v[0]);
    agora_barrier();
    CHECK(*counter == 100L * np, "lock counter %ld, expected %ld", *counter, 100L * np);
    agora_barrier();
    PASS("alloc");
    agora_finalize();
    return 0;
}
