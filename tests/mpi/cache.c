/* The bounded page cache on real ranks (docs/cache.md).
 *
 *   cache sweep PAGES ITERS [evicts]
 *     PAGES pages per rank, homed cyclically (most of them elsewhere); in
 *     every iteration each rank writes its own word of every page (false
 *     sharing: every page is written by every rank), takes a lock to add
 *     to a shared counter, and after a barrier reads every word of every
 *     page and checks it. Run under an AGORA_CACHE many times smaller than
 *     PAGES, every iteration evicts clean and written copies; with
 *     "evicts" the test checks it did (exact counts in the statistics).
 *   cache maps PAGES
 *     rank 1 homes PAGES pages and writes each one's index into it; rank 0
 *     then reads every other page (each copy a separate mapping) and checks
 *     them. With more pages than vm.max_map_count allows mappings, the
 *     cache bound must keep rank 0 within the limit (it used to end the
 *     job: "mprotect ... failed: Cannot allocate memory"). With "rewrite",
 *     rank 1 then writes every page again and rank 0 reads them again, last
 *     first (the copies it still holds come first): the
 *     home's writes to pages others hold copies of must reach them (under
 *     hlrc, regc and regc-page tracked by the kernel, or trapped).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static size_t page_bytes(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static uint64_t value_of(long it, int rank, size_t page)
{
    return ((uint64_t)it << 40) ^ ((uint64_t)rank << 32) ^ (page + 1);
}

static void sweep(size_t pages_per_rank, long iters, int want_evictions)
{
    const int me = agora_rank(), n = agora_nranks();
    const size_t pages = pages_per_rank * (size_t)n, words = page_bytes() / 8;
    CHECK((size_t)n <= words - 1, "too many ranks for one word each per page");
    uint64_t *mem = test_alloc_placed(pages * page_bytes(), AGORA_PLACE_CYCLIC, 0);
    CHECK(mem != NULL, "allocation of %zu pages failed", pages);
    uint64_t *counter = mem + words - 1; /* last word of page 0 */
    agora_lock_t *lock = test_lock_create();
    for (long it = 0; it < iters; it++) {
        for (size_t p = 0; p < pages; p++)
            mem[p * words + (size_t)me] = value_of(it, me, p);
        agora_lock(lock);
        *counter += 1;
        agora_unlock(lock);
        agora_barrier();
        for (size_t p = 0; p < pages; p++)
            for (int r = 0; r < n; r++) {
                uint64_t got = mem[p * words + (size_t)r];
                CHECK(got == value_of(it, r, p), "iteration %ld: page %zu word %d is %llx, expected %llx", it, p, r,
                      (unsigned long long)got, (unsigned long long)value_of(it, r, p));
            }
        CHECK(*counter == (uint64_t)n * (uint64_t)(it + 1), "iteration %ld: counter %llu, expected %llu", it,
              (unsigned long long)*counter, (unsigned long long)n * (it + 1));
        agora_barrier();
    }
    agora_stats_t s;
    CHECK(agora_stats_get(&s, 0) == AGORA_OK, "agora_stats_get");
    if (want_evictions) {
        CHECK(s.cache_evictions > 0 && s.cache_writebacks > 0 && s.cache_writeback_bytes > 0,
              "no evictions (%llu) or write-backs (%llu): the cache did not bound anything",
              (unsigned long long)s.cache_evictions, (unsigned long long)s.cache_writebacks);
        printf("rank %d: %llu evictions, %llu write-backs (%llu bytes), at most %llu copies held\n", me,
               (unsigned long long)s.cache_evictions, (unsigned long long)s.cache_writebacks,
               (unsigned long long)s.cache_writeback_bytes, (unsigned long long)s.cache_resident_peak);
    }
    PASS("cache sweep");
}

static void maps(size_t pages, int rewrite)
{
    const int me = agora_rank();
    CHECK(agora_nranks() >= 2, "maps needs 2 ranks");
    const size_t words = page_bytes() / 8;
    uint64_t *mem = test_alloc_placed(pages * page_bytes(), AGORA_PLACE_RANK, 1);
    CHECK(mem != NULL, "allocation of %zu pages failed", pages);
    if (me == 1)
        for (size_t p = 0; p < pages; p++)
            mem[p * words] = p + 1;
    agora_barrier();
    if (me == 0) {
        for (size_t p = 0; p < pages; p += 2)
            CHECK(mem[p * words] == p + 1, "page %zu holds %llu", p, (unsigned long long)mem[p * words]);
        agora_stats_t s;
        CHECK(agora_stats_get(&s, 0) == AGORA_OK, "agora_stats_get");
        printf("rank 0: read %zu separate pages, %llu evictions, at most %llu copies held\n", (pages + 1) / 2,
               (unsigned long long)s.cache_evictions, (unsigned long long)s.cache_resident_peak);
    }
    agora_barrier();
    if (rewrite) {
        if (me == 1)
            for (size_t p = 0; p < pages; p++)
                mem[p * words] = 2 * pages + p;
        agora_barrier();
        if (me == 0) /* last read first: those copies are still cached (a scan from the start would
                        evict each before it is read again) and must have been invalidated */
            for (size_t p = (pages - 1) & ~(size_t)1;; p -= 2) {
                CHECK(mem[p * words] == 2 * pages + p, "after the rewrite, page %zu holds %llu", p,
                      (unsigned long long)mem[p * words]);
                if (p < 2) break;
            }
        agora_barrier();
    }
    PASS("cache maps");
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    if (argc >= 4 && strcmp(argv[1], "sweep") == 0)
        sweep(strtoul(argv[2], NULL, 10), strtol(argv[3], NULL, 10), argc >= 5 && strcmp(argv[4], "evicts") == 0);
    else if (argc >= 3 && strcmp(argv[1], "maps") == 0)
        maps(strtoul(argv[2], NULL, 10), argc >= 4 && strcmp(argv[3], "rewrite") == 0);
    else {
        fprintf(stderr, "usage: cache sweep PAGES ITERS [evicts] | cache maps PAGES [rewrite]\n");
        agora_finalize();
        return 2;
    }
    agora_finalize();
    return 0;
}
