/* AGORA_HEAP in program mode: where the program's malloc blocks are homed.
 *   heap_placement local|block|cyclic
 * checks every page of a 4 MiB block against the placement the variable
 * asks for, and that a small block (below 1 MiB) stays on the calling rank;
 * then a thread on the last rank writes the block and main checks it. */
#include <agora/agora.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            printf("check failed: " __VA_ARGS__);                                                                      \
            printf("\n");                                                                                              \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static unsigned char *big;
static size_t big_bytes = 4u << 20;

static void *fill(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < big_bytes; i++)
        big[i] = (unsigned char)(i * 7);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *want = argc > 1 ? argv[1] : "local";
    int n = agora_nranks();
    big = malloc(big_bytes);
    char *small = malloc(1000);
    CHECK(big && small, "malloc");
    CHECK(agora_home_of(small) == 0, "a small block is homed on rank %d, not the caller's 0", agora_home_of(small));
    uintptr_t first = ((uintptr_t)big + 4095) & ~(uintptr_t)4095;
    uintptr_t last = ((uintptr_t)big + big_bytes - 1) & ~(uintptr_t)4095;
    int prev = -1, seen = 0;
    size_t pages = (last - first) / 4096 + 1, i = 0;
    for (uintptr_t p = first; p <= last; p += 4096, i++) {
        int home = agora_home_of((void *)p);
        CHECK(home >= 0 && home < n, "page %zu: home %d", i, home);
        if (!strcmp(want, "local")) CHECK(home == 0, "local: page %zu homed on %d", i, home);
        if (!strcmp(want, "block")) CHECK(home >= prev, "block: page %zu homed on %d after %d", i, home, prev);
        if (home != prev) seen++;
        prev = home;
    }
    if (!strcmp(want, "block")) CHECK(seen == n, "block: %d runs of homes over %d ranks", seen, n);
    if (!strcmp(want, "cyclic") && n > 1)
        CHECK(seen == (int)pages, "cyclic: %d home changes over %zu pages", seen, pages);
    agora_thread_t t;
    CHECK(agora_thread_create_on(&t, n - 1, fill, NULL) == AGORA_OK, "create");
    CHECK(agora_thread_join(t, NULL) == AGORA_OK, "join");
    for (size_t k = 0; k < big_bytes; k++)
        CHECK(big[k] == (unsigned char)(k * 7), "byte %zu", k);
    free(big);
    free(small);
    printf("PASS heap_placement %s on %d ranks (%zu pages)\n", want, n, pages);
    return 0;
}
