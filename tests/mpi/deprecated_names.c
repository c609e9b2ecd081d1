/* The names deprecated by docs/api-conventions.md still compile and work
 * until they are removed (the next minor version): this file uses only the
 * old names and is built with -Wno-deprecated-declarations (every other
 * in-tree user is on the new names, so the build draws no deprecation
 * warning). Needs 2 or more ranks. Delete it with the aliases. */
#include <stdint.h>

#include <agora/agora.h>
#include <agora/gptr.h>

#include "check.h"

int main(int argc, char **argv)
{
    CHECK(agora_init(&argc, &argv) == AGORA_OK, "agora_init");
    int me = agora_rank(), nr = agora_nranks();

    /* Allocation returning the pointer. */
    int64_t *shared = agora_alloc(sizeof(int64_t));
    CHECK(shared != NULL, "agora_alloc");
    char *placed = agora_alloc_placed(4096, AGORA_PLACE_RANK, nr - 1);
    CHECK(placed != NULL && agora_home_of(placed) == nr - 1, "agora_alloc_placed");
    CHECK(agora_alloc_placed(4096, AGORA_PLACE_RANK, nr) == NULL, "agora_alloc_placed on no rank");
    void *mine = agora_malloc(64);
    CHECK(mine != NULL && agora_home_of(mine) == me, "agora_malloc");
    CHECK(agora_free(mine) == AGORA_OK, "agora_free");
    CHECK(agora_free(mine) == AGORA_ERR_BAD_POINTER, "agora_free twice");
    void *spread = agora_malloc_placed(2 * 4096, AGORA_PLACE_CYCLIC, 0);
    CHECK(spread != NULL, "agora_malloc_placed");
    CHECK(agora_free(spread) == AGORA_OK, "agora_free of placed memory");

    /* Locks in handles the library allocates. */
    agora_lock_t *lock = agora_lock_create();
    agora_lock_t *array = agora_lock_array_create(3);
    CHECK(lock != NULL && array != NULL, "agora_lock_create / agora_lock_array_create");
    CHECK(agora_lock_array_create(0) == NULL, "agora_lock_array_create(0)");
    for (int i = 0; i < 20; i++) {
        CHECK(agora_lock(lock) == AGORA_OK, "agora_lock");
        ++*shared;
        CHECK(agora_unlock(lock) == AGORA_OK, "agora_unlock");
        CHECK(agora_lock(&array[i % 3]) == AGORA_OK, "agora_lock of an array element");
        CHECK(agora_unlock(&array[i % 3]) == AGORA_OK, "agora_unlock of an array element");
    }
    agora_barrier();
    CHECK(*shared == 20 * nr, "counter %lld, expected %d", (long long)*shared, 20 * nr);
    agora_barrier();
    /* The documented end of a created handle: destroy, then free. */
    if (me == 0) CHECK(agora_lock_destroy(lock) == AGORA_OK, "agora_lock_destroy of a created handle");
    CHECK(agora_free(lock) == AGORA_OK, "agora_free of a lock handle");
    CHECK(agora_free(array) == AGORA_OK, "agora_free of a lock array");

    /* Signals under their old names. */
    agora_gptr_t g = agora_gptr_alloc(4096);
    CHECK(g != AGORA_GPTR_NULL, "agora_gptr_alloc");
    uint64_t value = 7 + (uint64_t)me, got = 0;
    CHECK(agora_gptr_write(g, &value, 8) == AGORA_OK, "agora_gptr_write");
    agora_barrier();
    agora_signal_t s;
    CHECK(agora_signal_init(&s) == AGORA_OK, "agora_signal_init");
    CHECK(agora_gptr_read_async(agora_gptr_on(g, (me + 1) % nr), &got, 8, &s) == AGORA_OK, "read_async");
    CHECK(agora_signal_wait(&s) == AGORA_OK, "agora_signal_wait");
    CHECK(got == 7 + (uint64_t)((me + 1) % nr), "read %llu", (unsigned long long)got);
    CHECK(agora_signal_pending(&s) == 0, "agora_signal_pending");
    CHECK(agora_signal_pending(NULL) < 0, "agora_signal_pending(NULL) is a status");

    /* agora_stats_get with an int scope. */
    agora_stats_t st;
    int scope = AGORA_STATS_RANK;
    CHECK(agora_stats_get(&st, scope) == AGORA_OK && st.lock_acquires > 0, "agora_stats_get with an int");
    agora_barrier();
    PASS("deprecated_names");
    agora_finalize();
    return 0;
}
