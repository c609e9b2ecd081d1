/* The calls of docs/api-conventions.md on real ranks: status-returning
 * allocation (results through the out-parameter, NULL on failure), lock
 * init/destroy (created, array and address-named locks; destroying a held
 * lock is AGORA_ERR_MISUSE whichever rank holds it and whichever manages
 * it), completion signals under their agora_gptr_ names, and
 * agora_stats_get with its enum. Needs 2 or more ranks. */
#include <stdint.h>
#include <string.h>

#include <agora/agora.h>
#include <agora/gptr.h>

#include "check.h"

#define OK(call)                                                                                                       \
    do {                                                                                                               \
        int status_ = (call);                                                                                          \
        CHECK(status_ == AGORA_OK, "%s: %s", #call, agora_strerror(status_));                                          \
    } while (0)
#define FAILS(call, expected)                                                                                          \
    do {                                                                                                               \
        int status_ = (call);                                                                                          \
        CHECK(status_ == (expected), "%s: %s, expected %s", #call, agora_strerror(status_), #expected);                \
    } while (0)

static int me, nr;

static void memory(void)
{
    void *p = (void *)1;
    /* Collective: the same pointer everywhere, zero-filled. */
    OK(agora_mem_alloc(4096, &p));
    CHECK(p != NULL, "agora_mem_alloc gave NULL with AGORA_OK");
    int64_t sum[2] = {(int64_t)(intptr_t)p, *(int64_t *)p};
    OK(agora_reduce(sum, 2, AGORA_INT64, AGORA_SUM));
    CHECK(sum[0] == (int64_t)(intptr_t)p * nr && sum[1] == 0, "agora_mem_alloc: pointers differ across ranks");

    void *q = (void *)1;
    OK(agora_mem_alloc_placed(3 * 4096, AGORA_PLACE_RANK, nr - 1, &q));
    CHECK(agora_home_of(q) == nr - 1, "placed on rank %d, homed on %d", nr - 1, agora_home_of(q));

    /* Refusals: a status, and *out NULL (set, not left as it was). */
    q = (void *)1;
    FAILS(agora_mem_alloc_placed(4096, AGORA_PLACE_RANK, nr, &q), AGORA_ERR_INVALID_ARGUMENT);
    CHECK(q == NULL, "a refused agora_mem_alloc_placed left *out %p", q);
    q = (void *)1;
    FAILS(agora_mem_alloc_placed(4096, (agora_placement_t)7, 0, &q), AGORA_ERR_INVALID_ARGUMENT);
    CHECK(q == NULL, "a refused agora_mem_alloc_placed left *out %p", q);
    FAILS(agora_mem_alloc(4096, NULL), AGORA_ERR_INVALID_ARGUMENT);
    q = (void *)1;
    FAILS(agora_mem_alloc((size_t)1 << 62, &q), AGORA_ERR_NO_MEMORY);
    CHECK(q == NULL, "a refused agora_mem_alloc left *out %p", q);

    /* Non-collective. */
    void *mine = NULL;
    OK(agora_mem_malloc(100, &mine));
    CHECK(agora_home_of(mine) == me, "agora_mem_malloc'd memory homed on %d", agora_home_of(mine));
    OK(agora_mem_free(mine));
    FAILS(agora_mem_free(mine), AGORA_ERR_BAD_POINTER);
    FAILS(agora_mem_free(&mine), AGORA_ERR_BAD_POINTER);
    q = (void *)1;
    FAILS(agora_mem_malloc((size_t)1 << 62, &q), AGORA_ERR_NO_MEMORY);
    CHECK(q == NULL, "a refused agora_mem_malloc left *out %p", q);
    FAILS(agora_mem_malloc(8, NULL), AGORA_ERR_INVALID_ARGUMENT);
    OK(agora_mem_malloc_placed(4096, AGORA_PLACE_CYCLIC, 0, &mine));
    OK(agora_mem_free(mine));
    q = (void *)1;
    FAILS(agora_mem_malloc_placed(4096, AGORA_PLACE_RANK, -1, &q), AGORA_ERR_INVALID_ARGUMENT);
    CHECK(q == NULL, "a refused agora_mem_malloc_placed left *out %p", q);
    agora_barrier();
}

/* Rank `holder` holds *lock while rank `destroyer` tries to destroy it:
 * AGORA_ERR_MISUSE, and the lock still works afterwards. */
static void destroy_while_held(agora_lock_t *lock, int holder, int destroyer)
{
    if (me == holder) OK(agora_lock(lock));
    agora_barrier();
    if (me == destroyer) {
        agora_lock_t copy = *lock; /* the handle as it was */
        FAILS(agora_lock_destroy(lock), AGORA_ERR_MISUSE);
        CHECK(memcmp(&copy, lock, sizeof copy) == 0, "a refused destroy changed the handle");
    }
    agora_barrier();
    if (me == holder) OK(agora_unlock(lock));
    agora_barrier();
}

static void locks(void)
{
    /* A counter under a created lock, from every rank. */
    int64_t *counter = test_alloc(sizeof(int64_t));
    CHECK(counter != NULL, "agora_mem_alloc of the counter");
    agora_lock_t lock;
    OK(agora_lock_init(&lock));
    for (int i = 0; i < 50; i++) {
        OK(agora_lock(&lock));
        ++*counter;
        OK(agora_unlock(&lock));
    }
    agora_barrier();
    OK(agora_lock(&lock));
    CHECK(*counter == 50 * nr, "counter %lld, expected %d", (long long)*counter, 50 * nr);
    OK(agora_unlock(&lock));
    agora_barrier();

    /* Destroying a held lock, from the holding thread itself, from another
     * rank than the holder, and (for each) at the manager's rank or not. */
    for (int holder = 0; holder < 2; holder++) {
        destroy_while_held(&lock, holder, holder);
        destroy_while_held(&lock, holder, 1 - holder);
    }
    /* Free now: one rank destroys it; its handle is then refused. */
    if (me == 1) {
        OK(agora_lock_destroy(&lock));
        FAILS(agora_lock(&lock), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_trylock(&lock), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_unlock(&lock), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_lock_destroy(&lock), AGORA_ERR_INVALID_ARGUMENT);
    }
    agora_barrier();
    /* Initialised again (collective: every rank, the same call), a new lock. */
    OK(agora_lock_init(&lock));
    OK(agora_lock(&lock));
    OK(agora_unlock(&lock));
    agora_barrier();
    if (me == 0) OK(agora_lock_destroy(&lock));
    FAILS(agora_lock_destroy(NULL), AGORA_ERR_INVALID_ARGUMENT);
    FAILS(agora_lock_init(NULL), AGORA_ERR_INVALID_ARGUMENT);
    agora_barrier();

    /* Arrays: managers round robin, so every rank manages some. */
    enum { N = 5 };
    agora_lock_t array[N];
    FAILS(agora_lock_array_init(array, 0), AGORA_ERR_INVALID_ARGUMENT);
    OK(agora_lock_array_init(array, N));
    for (int i = 0; i < N; i++) {
        OK(agora_lock(&array[i]));
        OK(agora_unlock(&array[i]));
    }
    agora_barrier();
    if (me == 0) OK(agora_lock(&array[3]));
    agora_barrier();
    if (me == nr - 1) {
        /* Stops at the held one: 0..2 destroyed, 3 and 4 not. */
        FAILS(agora_lock_array_destroy(array, N), AGORA_ERR_MISUSE);
        FAILS(agora_lock(&array[0]), AGORA_ERR_INVALID_ARGUMENT);
        OK(agora_lock(&array[4]));
        OK(agora_unlock(&array[4]));
    }
    agora_barrier();
    if (me == 0) OK(agora_unlock(&array[3]));
    agora_barrier();
    if (me == nr - 1) OK(agora_lock_array_destroy(array + 3, 2));
    agora_barrier();

    /* An address-named lock (zero-filled, in global memory). */
    agora_lock_t *named = test_alloc(sizeof(agora_lock_t));
    CHECK(named != NULL, "agora_mem_alloc of an address-named lock");
    OK(agora_lock(named));
    OK(agora_unlock(named));
    agora_barrier();
    destroy_while_held(named, 0, nr - 1);
    if (me == 0) OK(agora_lock_destroy(named));
    agora_barrier();
    /* The mark is in global memory: every rank sees the lock destroyed. */
    FAILS(agora_lock(named), AGORA_ERR_INVALID_ARGUMENT);
    agora_barrier();
    if (me == 0) memset(named, 0, sizeof *named); /* AGORA_LOCK_INITIALIZER again */
    agora_barrier();
    OK(agora_lock(named));
    OK(agora_unlock(named));
    /* Not in global memory: refused, not named. */
    agora_lock_t stack_lock = AGORA_LOCK_INITIALIZER;
    FAILS(agora_lock_destroy(&stack_lock), AGORA_ERR_INVALID_ARGUMENT);
    agora_barrier();
}

static void signals(void)
{
    agora_gptr_t g = AGORA_GPTR_NULL;
    OK(agora_gptr_mem_alloc(4096, &g));
    CHECK(g != AGORA_GPTR_NULL && agora_gptr_rank(g) == me, "agora_gptr_mem_alloc gave rank %d", agora_gptr_rank(g));
    uint64_t value = 1000 + (uint64_t)me;
    OK(agora_gptr_write(g, &value, 8));
    agora_barrier();
    agora_gptr_signal_t s;
    OK(agora_gptr_signal_init(&s));
    int64_t pending = -1;
    OK(agora_gptr_signal_pending(&s, &pending));
    CHECK(pending == 0, "a new signal has %lld pending", (long long)pending);
    uint64_t got[8];
    for (int r = 0; r < nr && r < 8; r++)
        OK(agora_gptr_read_async(agora_gptr_on(g, r), &got[r], 8, &s));
    OK(agora_gptr_signal_wait(&s));
    for (int r = 0; r < nr && r < 8; r++)
        CHECK(got[r] == 1000 + (uint64_t)r, "rank %d's value %llu", r, (unsigned long long)got[r]);
    OK(agora_gptr_signal_pending(&s, &pending));
    CHECK(pending == 0, "%lld pending after the wait", (long long)pending);
    OK(agora_gptr_signal_destroy(&s));
    FAILS(agora_gptr_signal_pending(&s, NULL), AGORA_ERR_INVALID_ARGUMENT);
    FAILS(agora_gptr_signal_destroy(NULL), AGORA_ERR_INVALID_ARGUMENT);

    /* Initialising a signal again while a get counted on it is under way is
     * refused (the completions would land in the new one), and the signal
     * still works. 4 MiB from the next rank take milliseconds. */
    static char buf[4 << 20];
    agora_gptr_t big = AGORA_GPTR_NULL;
    OK(agora_gptr_mem_alloc(sizeof buf, &big));
    OK(agora_gptr_signal_init(&s));
    OK(agora_gptr_get_async(buf, agora_gptr_on(big, (me + 1) % nr), sizeof buf, &s));
    FAILS(agora_gptr_signal_init(&s), AGORA_ERR_MISUSE);
    OK(agora_gptr_signal_wait(&s));
    OK(agora_gptr_signal_pending(&s, &pending));
    CHECK(pending == 0, "%lld pending after the wait", (long long)pending);
    OK(agora_gptr_signal_init(&s)); /* idle: allowed */
    /* A signal never initialised is named as such; a zero-filled one is valid. */
    agora_gptr_signal_t junk;
    memset(&junk, 0x5a, sizeof junk);
    FAILS(agora_gptr_signal_wait(&junk), AGORA_ERR_INVALID_ARGUMENT);
    FAILS(agora_gptr_read_async(g, &got[0], 8, &junk), AGORA_ERR_INVALID_ARGUMENT);
    FAILS(agora_gptr_signal_pending(&junk, &pending), AGORA_ERR_INVALID_ARGUMENT);
    agora_gptr_signal_t zero;
    memset(&zero, 0, sizeof zero);
    OK(agora_gptr_read_async(g, &got[0], 8, &zero));
    OK(agora_gptr_signal_wait(&zero));
    CHECK(got[0] == 1000 + (uint64_t)me, "read through a zero-filled signal: %llu", (unsigned long long)got[0]);
    agora_barrier();
}

static void stats(void)
{
    agora_stats_t st;
    OK(agora_stats_get(&st, AGORA_STATS_RANK));
    CHECK(st.lock_acquires > 0, "no lock acquires counted");
    OK(agora_stats_get(&st, AGORA_STATS_JOB));
    FAILS(agora_stats_get(&st, (agora_stats_scope_t)7), AGORA_ERR_INVALID_ARGUMENT);
    FAILS(agora_stats_get(NULL, AGORA_STATS_RANK), AGORA_ERR_INVALID_ARGUMENT);
}

int main(int argc, char **argv)
{
    void *early = (void *)1;
    CHECK(agora_mem_malloc(8, &early) == AGORA_ERR_NOT_INITIALIZED && early == NULL,
          "agora_mem_malloc before agora_init");
    agora_lock_t unborn;
    CHECK(agora_lock_init(&unborn) == AGORA_ERR_NOT_INITIALIZED, "agora_lock_init before agora_init");
    OK(agora_init(&argc, &argv));
    me = agora_rank();
    nr = agora_nranks();
    CHECK(nr >= 2, "needs 2 or more ranks, not %d", nr);
    memory();
    locks();
    signals();
    stats();
    PASS("api_conventions");
    OK(agora_finalize());
    return 0;
}
