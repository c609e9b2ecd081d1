/* CHECK for program-mode tests that go on after a failed check and report
 * how many failed: `failures` is a global, so global memory, counted from
 * threads on every rank (an atomic add, atomic across ranks in program mode). */
#pragma once
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                                                        \
        }                                                                                                              \
    } while (0)
