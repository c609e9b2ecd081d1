/* Global memory under the default AGORA_MEMORY (docs/memory.md): a program's
 * first real input must fit without --memory.
 *
 *   default_memory big       main mallocs 2 GiB (2x the largest array the
 *                            old fixed 4G default allowed: rank 0's heap was
 *                            4G / 2N = 1 GiB on 2 ranks) and a 2 GiB
 *                            anonymous mmap (the placed region was 1 GiB),
 *                            touches a few pages of each; a thread on the
 *                            other rank reads them and writes back; main
 *                            checks.
 *   default_memory too_big   a malloc larger than any range allows fails
 *                            with ENOMEM, and the message names what to raise
 *                            and the current value (the test checks it). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "failure_count.h"

#define GIB ((size_t)1 << 30)
#define BYTES (2 * GIB)
#define PAGE 4096

static char *heap, *mapped;

/* Offsets of the pages touched: both ends and the middle. */
static const size_t offsets[] = {0, BYTES / 2 + 3 * PAGE, BYTES - 1};

static void *reader(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        size_t at = offsets[i];
        CHECK(heap[at] == (char)(i + 1), "heap byte %zu: %d", at, heap[at]);
        CHECK(mapped[at] == (char)(i + 11), "mapped byte %zu: %d", at, mapped[at]);
        heap[at] = (char)(i + 21);
        mapped[at] = (char)(i + 31);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "too_big")) {
        errno = 0;
        void *p = malloc((size_t)1 << 45); /* 32 TiB: more than any heap */
        CHECK(p == NULL && errno == ENOMEM, "malloc(32 TiB): %p, errno %d", p, errno);
        if (failures) return 1;
        printf("PASS default_memory too_big\n");
        return 0;
    }
    if (strcmp(mode, "big")) {
        fprintf(stderr, "usage: default_memory big|too_big\n");
        return 2;
    }
    heap = malloc(BYTES);
    CHECK(heap != NULL, "malloc(2 GiB) failed");
    mapped = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(mapped != MAP_FAILED, "mmap(2 GiB) failed");
    if (failures) return 1;
    for (int i = 0; i < 3; i++) {
        heap[offsets[i]] = (char)(i + 1);
        mapped[offsets[i]] = (char)(i + 11);
    }
    pthread_t t; /* the first thread goes to rank 1 on 2 ranks */
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0, "pthread_create");
    pthread_join(t, NULL);
    for (int i = 0; i < 3; i++) {
        CHECK(heap[offsets[i]] == (char)(i + 21), "heap byte %zu after the thread", offsets[i]);
        CHECK(mapped[offsets[i]] == (char)(i + 31), "mapped byte %zu after the thread", offsets[i]);
    }
    CHECK(munmap(mapped, BYTES) == 0, "munmap");
    free(heap);
    if (failures) return 1;
    printf("PASS default_memory big\n");
    return 0;
}
