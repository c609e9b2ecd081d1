/* One-sided reads and home write tracking end to end (issue 14): rank 0
 * homes pages of a collective allocation, of a placed one and of its own
 * heap, writes them each round and then computes while the other ranks read
 * them; values are checked after every barrier. The counts the host keeps
 * are checked against what the test expects of the configuration:
 *
 *   one_sided <rounds> <reads: some|none|any> <tracked: some|none|any>
 *
 * e.g. under AGORA_PROTOCOL=hlrc (whose engine reads one-sided and tracks
 * home writes) "some some"; with AGORA_FETCH=messages "none any"; with
 * AGORA_HOME_WRITES=trap "any none". */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "check.h"

enum { kPages = 96, kPage = 4096 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static volatile double g_sink;
static void compute(double seconds)
{
    double x = 0, end = now() + seconds;
    while (now() < end)
        for (int i = 0; i < 10000; ++i)
            x += i * 0.5;
    g_sink = x;
}

static void expect(const char *what, const char *want, uint64_t got)
{
    if (strcmp(want, "some") == 0)
        CHECK(got > 0, "%s: expected some, got 0 (protocol %s)", what, agora_protocol_name());
    else if (strcmp(want, "none") == 0)
        CHECK(got == 0, "%s: expected none, got %llu (protocol %s)", what, (unsigned long long)got,
              agora_protocol_name());
    else
        CHECK(strcmp(want, "any") == 0, "bad expectation '%s' (some, none or any)", want);
}

/* Every int of page p of buf holds round * 1000 + p (written by rank 0). */
static void fill(char *buf, int round)
{
    for (int p = 0; p < kPages; ++p) {
        int *ints = (int *)(buf + (size_t)p * kPage);
        for (int i = 0; i < kPage / (int)sizeof(int); i += 64)
            ints[i] = round * 1000 + p;
    }
}

static void verify(const char *name, const char *buf, int round)
{
    for (int p = 0; p < kPages; ++p) {
        const int *ints = (const int *)(buf + (size_t)p * kPage);
        for (int i = 0; i < kPage / (int)sizeof(int); i += 64)
            CHECK(ints[i] == round * 1000 + p, "%s page %d int %d: %d, expected %d (round %d)", name, p, i, ints[i],
                  round * 1000 + p, round);
    }
}

int main(int argc, char **argv)
{
    CHECK(agora_init(&argc, &argv) == AGORA_OK, "agora_init failed");
    CHECK(argc == 4, "usage: one_sided ROUNDS READS TRACKED");
    int rounds = atoi(argv[1]);
    int me = agora_rank(), n = agora_nranks();
    CHECK(n >= 2 && rounds >= 1, "needs 2 ranks and a round");

    char *collective = test_alloc_placed((size_t)kPages * kPage, AGORA_PLACE_RANK, 0);
    CHECK(collective, "agora_alloc_placed failed");
    /* Not collective, made by rank 0 and passed on: a placed allocation
     * (every rank knows it), and rank 0's heap (only its home can tell it is
     * allocated: read by message). */
    int64_t addrs[2] = {0, 0};
    if (me == 0) {
        addrs[0] = (int64_t)(intptr_t)test_malloc_placed((size_t)kPages * kPage, AGORA_PLACE_RANK, 0);
        addrs[1] = (int64_t)(intptr_t)test_malloc((size_t)kPages * kPage);
        CHECK(addrs[0] && addrs[1], "agora_malloc_placed or agora_malloc failed");
    }
    CHECK(agora_reduce(addrs, 2, AGORA_INT64, AGORA_SUM) == AGORA_OK, "reduce");
    char *placed = (char *)(intptr_t)addrs[0], *heap = (char *)(intptr_t)addrs[1];

    for (int round = 1; round <= rounds; ++round) {
        if (me == 0) {
            fill(collective, round);
            fill(placed, round);
            fill(heap, round);
        }
        CHECK(agora_barrier() == AGORA_OK, "barrier");
        if (me == 0) {
            compute(0.02); /* the home is busy while the others read */
        } else {
            verify("collective", collective, round);
            verify("placed", placed, round);
            verify("heap", heap, round);
        }
        CHECK(agora_barrier() == AGORA_OK, "barrier");
    }

    agora_stats_t s;
    CHECK(agora_stats_get(&s, AGORA_STATS_JOB) == AGORA_OK, "agora_stats_get(JOB)");
    if (me == 0)
        printf("one_sided_reads %llu home_writes_tracked %llu pages_fetched %llu (protocol %s)\n",
               (unsigned long long)s.one_sided_reads, (unsigned long long)s.home_writes_tracked,
               (unsigned long long)s.pages_fetched, agora_protocol_name());
    expect("one_sided_reads", argv[2], s.one_sided_reads);
    expect("home_writes_tracked", argv[3], s.home_writes_tracked);
    if (me == 0) CHECK(agora_mem_free(placed) == AGORA_OK, "agora_mem_free(placed)");
    PASS("one_sided");
    return agora_finalize() == AGORA_OK ? 0 : 1;
}
