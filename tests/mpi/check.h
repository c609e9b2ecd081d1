/* Helpers for the multi-rank tests: a failed check names the rank and the
 * values and ends the job non-zero. */
#ifndef AGORA_TEST_CHECK_H
#define AGORA_TEST_CHECK_H
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <agora/agora.h>

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "rank %d: check failed at %s:%d: %s: ", agora_rank(), __FILE__, __LINE__, #cond);          \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* The status-returning allocations as expressions, for tests that only need
 * the memory: the pointer, NULL on failure (the library printed why; tests
 * of the statuses themselves call agora_mem_* directly). */
static inline void *test_alloc(size_t bytes)
{
    void *p = NULL;
    agora_mem_alloc(bytes, &p);
    return p;
}
static inline void *test_alloc_placed(size_t bytes, agora_placement_t placement, int rank)
{
    void *p = NULL;
    agora_mem_alloc_placed(bytes, placement, rank, &p);
    return p;
}
static inline void *test_malloc(size_t bytes)
{
    void *p = NULL;
    agora_mem_malloc(bytes, &p);
    return p;
}
static inline void *test_malloc_placed(size_t bytes, agora_placement_t placement, int rank)
{
    void *p = NULL;
    agora_mem_malloc_placed(bytes, placement, rank, &p);
    return p;
}
/* count created locks in agora_mem_malloc'd handles (what the deprecated
 * agora_lock_array_create did); NULL on failure. Always inlined, so that
 * the creation's call site (checked across ranks) is the test's. */
static inline __attribute__((always_inline)) agora_lock_t *test_lock_array_create(size_t count)
{
    agora_lock_t *locks = (agora_lock_t *)test_malloc(count * sizeof(agora_lock_t));
    if (locks && agora_lock_array_init(locks, count) != AGORA_OK) {
        agora_mem_free(locks);
        locks = NULL;
    }
    return locks;
}
#define test_lock_create() test_lock_array_create(1)

#define PASS(name)                                                                                                     \
    do {                                                                                                               \
        if (agora_rank() == 0) printf("PASS %s on %d ranks\n", name, agora_nranks());                                  \
    } while (0)
#endif
