/* Helpers for the multi-rank tests: a failed check names the rank and the
 * values and ends the job non-zero. */
#ifndef AGORA_TEST_CHECK_H
#define AGORA_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#include <agora/agora.h>

#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "rank %d: check failed at %s:%d: %s: ", agora_rank(),     \
                    __FILE__, __LINE__, #cond);                                       \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, "\n");                                                    \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#define PASS(name)                                                                    \
    do {                                                                              \
        if (agora_rank() == 0) printf("PASS %s on %d ranks\n", name, agora_nranks()); \
    } while (0)
#endif
