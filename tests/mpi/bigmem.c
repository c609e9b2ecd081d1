/* A large, sparsely used global range (run with --memory 16T): allocations
 * of a TiB work, with the right homes, and the per-page metadata does not
 * cost resident memory in proportion to the range (it used to cost 4 GiB
 * per rank at 16T). Usage: bigmem MAX_PEAK_RSS_MIB */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define PAGE 4096

static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    long max_mib = argc > 1 ? atol(argv[1]) : 256;
    int me = agora_rank(), np = agora_nranks();
    const size_t tib = (size_t)1 << 40;

    /* Collective, block placement: rank r homes the r-th 1/N of the pages. */
    char *big = test_alloc(tib);
    CHECK(big != NULL, "test_alloc(1 TiB) failed");
    size_t pages = tib / PAGE;
    for (int r = 0; r < np; r++) {
        size_t first = (size_t)r * pages / np, last = (size_t)(r + 1) * pages / np - 1;
        CHECK(agora_home_of(big + first * PAGE) == r && agora_home_of(big + last * PAGE) == r,
              "block page %zu or %zu not homed on %d", first, last, r);
    }
    /* Cyclic, after it: homes alternate. */
    char *cyc = test_alloc_placed(64 * PAGE, AGORA_PLACE_CYCLIC, 0);
    CHECK(cyc == big + tib, "allocations not contiguous");
    for (int i = 0; i < 64; i++)
        CHECK(agora_home_of(cyc + i * PAGE) == i % np, "cyclic page %d", i);

    /* Each rank writes a word into a page of every rank's part of big (far
     * apart, some remote), plus the cyclic pages; everyone checks all. */
    agora_barrier();
    for (int r = 0; r < np; r++) {
        size_t page = (size_t)r * pages / np + (size_t)me * 1000003 % (pages / np);
        ((long *)(big + page * PAGE))[me] = 1000 * r + me + 1;
    }
    ((long *)(cyc + me * PAGE))[1] = me + 7;
    /* Per-rank heap: a block of a TiB (of a 4 TiB arena at 16T on 2 ranks),
     * touched at both ends. */
    char *heap = test_malloc(tib);
    CHECK(heap != NULL && agora_home_of(heap) == me, "test_malloc(1 TiB) failed");
    heap[0] = (char)(me + 1);
    heap[tib - 1] = (char)(me + 2);
    char **heaps = test_alloc((size_t)np * sizeof(char *));
    heaps[me] = heap;
    agora_barrier();
    for (int w = 0; w < np; w++)
        for (int r = 0; r < np; r++) {
            size_t page = (size_t)r * pages / np + (size_t)w * 1000003 % (pages / np);
            CHECK(((long *)(big + page * PAGE))[w] == 1000 * r + w + 1, "word of rank %d in rank %d's part", w, r);
        }
    for (int r = 0; r < np; r++) {
        CHECK(((long *)(cyc + r * PAGE))[1] == r + 7, "cyclic word of rank %d", r);
        CHECK(heaps[r][0] == r + 1 && heaps[r][tib - 1] == r + 2, "heap of rank %d", r);
    }
    agora_barrier();
    CHECK(agora_mem_free(heap) == 0, "free of the 1 TiB block");

    long kib = peak_rss_kib();
    CHECK(kib > 0, "cannot read VmHWM");
    CHECK(kib < max_mib * 1024, "peak resident memory %ld MiB, more than the bound %ld MiB", kib / 1024, max_mib);
    int64_t peak[1] = {kib};
    agora_reduce(peak, 1, AGORA_INT64, AGORA_MAX);
    if (me == 0) printf("peak RSS per rank: %lld KiB (bound %ld MiB)\n", (long long)peak[0], max_mib);
    agora_barrier();
    PASS("bigmem");
    agora_finalize();
    return 0;
}
