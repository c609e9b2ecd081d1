/* Global pointers (include/agora/gptr.h) on real ranks, one or more sub-tests a run,
 * under whichever scheme agorarun --gptr chose (checked against AGORA_GPTR):
 *
 *   gptr scalar                 blocking reads/writes of widths 1, 2, 4, 8 at
 *                               every aligned offset, local and remote, read
 *                               back at once, in other widths, and by every
 *                               rank after a barrier (two rounds)
 *   gptr async                  split-phase reads into distinct locals and
 *                               writes, hundreds on one signal; pending, wait,
 *                               the NULL signal with agora_gptr_sync
 *   gptr bulk [MAX]             get/put and their _async forms of odd sizes
 *                               (up to MAX bytes) at odd offsets and buffer
 *                               alignments, with guard bytes around each, and
 *                               the whole region checked by its home
 *   gptr store                  one-way stores to the right neighbour and to
 *                               oneself, consumed with agora_gptr_store_sync;
 *                               stores made visible by a barrier
 *   gptr order [OPS]            per-location program order: a random mix of
 *                               every kind of access to windows on three
 *                               homes, each read checked against the latest
 *                               write before it in program order
 *   gptr visibility [R] [INCS]  writes of every kind seen by every rank after a
 *                               barrier (falsely shared lines); counters
 *                               incremented under locks by every rank
 *   gptr sharing [ROUNDS]       bulk puts and gets of odd-sized stripes of
 *                               several ranks in the same lines and blocks
 *   gptr threads [OPS]          fork-join threads on every rank (agorarun
 *                               --threads-per-rank), each with its own windows
 *                               on every home, signal and implicit signal
 *   gptr errors [only0]         bad pointers and arguments: the status each
 *                               call returns, nothing sent, nothing counted
 *                               (only0: only rank 0 makes the refused calls)
 *   gptr zero_end               transfers of 0 bytes at the end of a full
 *                               segment (AGORA_GPTR_SEGMENT=1M)
 *   gptr alloc_differ           agora_gptr_alloc with different sizes (ends
 *                               the job: tests/mpi/CMakeLists.txt checks the
 *                               message)
 *
 * Under swcc a rank's local pointer to its own segment may be stale for
 * blocks other ranks wrote (gptr.h, agora_gptr_to_local); the checks through
 * the local pointer are made under the other schemes only. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <agora/gptr.h>

#include "check.h"

static int me, nr;

/* agora_gptr_mem_alloc as an expression: AGORA_GPTR_NULL on failure. */
static agora_gptr_t gptr_alloc(size_t bytes)
{
    agora_gptr_t g = AGORA_GPTR_NULL;
    agora_gptr_mem_alloc(bytes, &g);
    return g;
}

/* agora_gptr_signal_pending as an expression: the count, or a negative status. */
static int64_t signal_pending(agora_gptr_signal_t *s)
{
    int64_t pending = 0;
    agora_status_t status = agora_gptr_signal_pending(s, &pending);
    return status == AGORA_OK ? pending : (int64_t)status;
}
static int swcc; /* the local pointer is not to be trusted for data others wrote */
static const char *scheme = "?";

#define OK(call)                                                                                                       \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        CHECK(rc_ == AGORA_OK, "%s returned %d (%s) under %s", #call, rc_, agora_strerror(rc_), scheme);               \
    } while (0)

/* The status of a call that must fail. */
#define FAILS(call, status)                                                                                            \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        CHECK(rc_ == (status), "%s returned %d (%s), expected %s", #call, rc_, agora_strerror(rc_), #status);          \
    } while (0)

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t rnd_state;
static uint64_t rnd(void) { return mix(rnd_state++); }
static uint64_t below(uint64_t n) { return rnd() % n; }

/* Byte i of the pattern `seed`. */
static uint8_t pat(uint64_t seed, uint64_t i) { return (uint8_t)mix(seed * 0x100000001b3ull + i); }
static void fill(uint8_t *p, uint64_t seed, uint64_t from, uint64_t n)
{
    for (uint64_t i = 0; i < n; ++i)
        p[i] = pat(seed, from + i);
}

typedef union {
    uint8_t b[8];
    uint16_t h;
    uint32_t i;
    uint64_t l;
} word_t;

/* Blocking scalar accesses of width w through a word (its first w bytes). */
static word_t rd(agora_gptr_t g, size_t w)
{
    word_t v;
    v.l = 0x5a5a5a5a5a5a5a5aull;
    OK(agora_gptr_read(g, &v, w));
    return v;
}
static void wr(agora_gptr_t g, const uint8_t *bytes, size_t w)
{
    word_t v;
    memcpy(v.b, bytes, w);
    OK(agora_gptr_write(g, &v, w));
}

/* The first byte at which a and b differ, or -1. */
static long differ(const uint8_t *a, const uint8_t *b, uint64_t n)
{
    if (memcmp(a, b, n) == 0) return -1;
    for (uint64_t i = 0; i < n; ++i)
        if (a[i] != b[i]) return (long)i;
    return -1;
}

#define SAME(got, want, n, ...)                                                                                        \
    do {                                                                                                               \
        long at_ = differ((const uint8_t *)(got), (const uint8_t *)(want), (n));                                       \
        if (at_ >= 0) {                                                                                                \
            fprintf(stderr, "rank %d: byte %ld of %llu: got 0x%02x, expected 0x%02x (%s): ", me, at_,                  \
                    (unsigned long long)(n), ((const uint8_t *)(got))[at_], ((const uint8_t *)(want))[at_], scheme);   \
            CHECK(0, __VA_ARGS__);                                                                                     \
        }                                                                                                              \
    } while (0)

static int is(const char *name) { return strcmp(scheme, name) == 0; }

/* What the scheme counted: caching schemes hit, the others never count hits or misses. */
static void check_counts(const char *test)
{
    agora_gptr_stats_t st;
    OK(agora_gptr_stats(&st));
    CHECK(st.reads > 0 && st.writes > 0 && st.local > 0 && st.requests > 0,
          "%s: reads %llu writes %llu local %llu requests %llu", test, (unsigned long long)st.reads,
          (unsigned long long)st.writes, (unsigned long long)st.local, (unsigned long long)st.requests);
    if (is("ordercache") || is("swcc"))
        CHECK(st.hits > 0 && st.misses > 0, "%s: %s made %llu hits and %llu misses", test, scheme,
              (unsigned long long)st.hits, (unsigned long long)st.misses);
    else
        CHECK(st.hits == 0 && st.misses == 0, "%s: %s, which caches nothing, counted %llu hits and %llu misses", test,
              scheme, (unsigned long long)st.hits, (unsigned long long)st.misses);
}

static agora_gptr_t alloc_checked(size_t bytes)
{
    agora_gptr_t g = gptr_alloc(bytes);
    CHECK(g != AGORA_GPTR_NULL, "agora_gptr_alloc(%zu) failed", bytes);
    CHECK(agora_gptr_rank(g) == me && agora_gptr_offset(g) % 65536 == 0, "agora_gptr_alloc(%zu) = rank %d offset %llu",
          bytes, agora_gptr_rank(g), (unsigned long long)agora_gptr_offset(g));
    return g;
}

/* ---- scalar ------------------------------------------------------------- */

enum { kSlice = 1024, kPart = kSlice / 4 };

/* What `writer` writes to its slice of `home` in `round`. */
static void scalar_image(int round, int writer, int home, uint8_t *img)
{
    fill(img, (uint64_t)(round * 64 + writer) * 64 + home + 1, 0, kSlice);
}

static void test_scalar(void)
{
    agora_gptr_t base = alloc_checked((size_t)nr * kSlice + 5);
    uint8_t *mine = agora_gptr_to_local(base);
    int local_var = 0;
    CHECK(mine != NULL, "agora_gptr_to_local of the caller's own allocation is NULL");
    CHECK(agora_gptr_from_local(mine + 100) == agora_gptr_add(base, 100), "from_local(to_local(g) + 100) != g + 100");
    CHECK(agora_gptr_to_local(agora_gptr_on(base, (me + 1) % nr)) == NULL, "to_local of another rank's memory");
    CHECK(agora_gptr_from_local(&local_var) == AGORA_GPTR_NULL, "from_local of a stack variable");
    CHECK(agora_gptr_rank(agora_gptr_add(base, 12345)) == me &&
              agora_gptr_offset(agora_gptr_add(base, 12345)) == agora_gptr_offset(base) + 12345,
          "agora_gptr_add");
    /* Zero-filled: this rank's own slices, here and on its right. */
    for (int i = 0; i < kSlice; ++i)
        CHECK(mine[me * kSlice + i] == 0, "byte %d not zero-filled", i);
    agora_gptr_t right0 = agora_gptr_add(agora_gptr_on(base, (me + 1) % nr), me * kSlice);
    for (int i = 0; i < kSlice; i += 8)
        CHECK(rd(agora_gptr_add(right0, i), 8).l == 0, "remote byte %d not zero", i);

    uint8_t img[kSlice];
    static const size_t widths[] = {1, 2, 4, 8};
    /* Scalars to and from local buffers of any alignment. */
    {
        union {
            uint64_t align;
            uint8_t b[24];
        } in, out;
        for (int d = 0; d < 2; ++d) {
            agora_gptr_t g = agora_gptr_add(agora_gptr_on(base, (me + d) % nr), (int64_t)me * kSlice);
            for (int wi = 0; wi < 4; ++wi)
                for (int m = 0; m < 8; ++m) {
                    size_t w = widths[wi];
                    for (size_t i = 0; i < w; ++i)
                        in.b[m + i] = (uint8_t)(0x40 + 16 * m + i + wi);
                    memset(out.b, 0, sizeof out.b);
                    OK(agora_gptr_write(g, in.b + m, w));
                    OK(agora_gptr_read(g, out.b + 7 - m, w));
                    SAME(out.b + 7 - m, in.b + m, w, "width %zu through local buffers at +%d and +%d", w, m, 7 - m);
                }
            word_t zero = {.l = 0};
            OK(agora_gptr_write(g, &zero, 8));
        }
    }
    for (int round = 0; round < 2; ++round) {
        for (int d = 0; d < nr; ++d) {
            int home = (me + d) % nr;
            agora_gptr_t g = agora_gptr_add(agora_gptr_on(base, home), (int64_t)me * kSlice);
            scalar_image(round, me, home, img);
            /* Part wi is written with width 2^wi, each value read back at once. */
            for (int wi = 0; wi < 4; ++wi) {
                size_t w = widths[wi];
                for (int at = wi * kPart; at < (wi + 1) * kPart; at += (int)w) {
                    wr(agora_gptr_add(g, at), img + at, w);
                    word_t v = rd(agora_gptr_add(g, at), w);
                    SAME(v.b, img + at, w, "round %d home %d offset %d width %zu: read right after the write", round,
                         home, at, w);
                }
            }
            /* Backwards, and then in every width at every aligned offset. */
            for (int wi = 3; wi >= 0; --wi) {
                size_t w = widths[wi];
                for (int at = (wi + 1) * kPart - (int)w; at >= wi * kPart; at -= (int)w) {
                    word_t v = rd(agora_gptr_add(g, at), w);
                    SAME(v.b, img + at, w, "round %d home %d offset %d width %zu: read back", round, home, at, w);
                }
            }
            for (int wi = d < 2 ? 0 : 3; wi < 4; ++wi) /* all widths here and on the right */
                for (int at = 0; at < kSlice; at += (int)widths[wi]) {
                    word_t v = rd(agora_gptr_add(g, at), widths[wi]);
                    SAME(v.b, img + at, widths[wi], "round %d home %d offset %d read in width %zu", round, home, at,
                         widths[wi]);
                }
        }
        OK(agora_barrier());
        /* Every rank's writes, seen by every rank. */
        for (int home = 0; home < nr; ++home)
            for (int writer = 0; writer < nr; ++writer) {
                agora_gptr_t g = agora_gptr_add(agora_gptr_on(base, home), (int64_t)writer * kSlice);
                scalar_image(round, writer, home, img);
                /* Every word, and each part in the width that wrote it. */
                for (int at = 0; at < kSlice; at += 8) {
                    word_t v = rd(agora_gptr_add(g, at), 8);
                    SAME(v.b, img + at, 8, "round %d: rank %d's write to rank %d offset %d read in width 8", round,
                         writer, home, at);
                }
                for (int wi = 0; wi < 3; ++wi)
                    for (int at = wi * kPart; at < (wi + 1) * kPart; at += (int)widths[wi]) {
                        word_t v = rd(agora_gptr_add(g, at), widths[wi]);
                        SAME(v.b, img + at, widths[wi], "round %d: rank %d's write to rank %d offset %d width %zu",
                             round, writer, home, at, widths[wi]);
                    }
                if (home == me && !swcc)
                    SAME(mine + writer * kSlice, img, kSlice, "round %d: local pointer to rank %d's writes", round,
                         writer);
            }
        OK(agora_barrier());
    }
    check_counts("scalar");
}

/* ---- async -------------------------------------------------------------- */

enum { kK = 400, kArea = 8192 };

/* Value i of width w written by `writer` to `target` in (round, phase). */
static uint64_t async_value(int round, int phase, int writer, int target, int wi, int i)
{
    return mix(((uint64_t)((round * 8 + phase) * 64 + writer) * 64 + target) * 4096 + wi * 1024 + i);
}

static uint64_t r8[kK];
static uint32_t r4[kK];
static uint16_t r2[kK];
static uint8_t r1[kK];

/* Where value i of width 2^wi lives in an area: 8-byte values first, then 4, 2, 1. */
static int64_t async_at(int wi, int i)
{
    static const int start[] = {14 * kK, 12 * kK, 8 * kK, 0}; /* widths 1, 2, 4, 8 */
    return start[wi] + (int64_t)i * (1 << wi);
}

/* The operations this rank issued, as agora_gptr_stats must count them. */
static uint64_t issued_reads, issued_writes, issued_local;

static void async_writes(agora_gptr_t area, int round, int phase, int writer, int target, agora_gptr_signal_t *s)
{
    issued_writes += 4 * kK;
    if (agora_gptr_rank(area) == me) issued_local += 4 * kK;
    for (int i = 0; i < kK; ++i)
        for (int wi = 0; wi < 4; ++wi) {
            word_t v;
            v.l = async_value(round, phase, writer, target, wi, i);
            OK(agora_gptr_write_async(agora_gptr_add(area, async_at(wi, i)), &v, (size_t)1 << wi, s));
            v.l = ~0ull; /* the value was taken at the call */
        }
}

static void async_reads(agora_gptr_t area, agora_gptr_signal_t *s)
{
    issued_reads += 4 * kK;
    if (agora_gptr_rank(area) == me) issued_local += 4 * kK;
    memset(r8, 0xa5, sizeof r8), memset(r4, 0xa5, sizeof r4), memset(r2, 0xa5, sizeof r2), memset(r1, 0xa5, sizeof r1);
    for (int i = 0; i < kK; ++i) {
        OK(agora_gptr_read_async(agora_gptr_add(area, async_at(3, i)), &r8[i], 8, s));
        OK(agora_gptr_read_async(agora_gptr_add(area, async_at(2, i)), &r4[i], 4, s));
        OK(agora_gptr_read_async(agora_gptr_add(area, async_at(1, i)), &r2[i], 2, s));
        OK(agora_gptr_read_async(agora_gptr_add(area, async_at(0, i)), &r1[i], 1, s));
    }
}

static void async_check(int round, int phase, int writer, int target, const char *what)
{
    for (int i = 0; i < kK; ++i) {
        CHECK(r8[i] == async_value(round, phase, writer, target, 3, i),
              "%s: 8-byte value %d of rank %d at rank %d: %llx", what, i, writer, target, (unsigned long long)r8[i]);
        CHECK(r4[i] == (uint32_t)async_value(round, phase, writer, target, 2, i),
              "%s: 4-byte value %d of rank %d at rank %d", what, i, writer, target);
        CHECK(r2[i] == (uint16_t)async_value(round, phase, writer, target, 1, i),
              "%s: 2-byte value %d of rank %d at rank %d", what, i, writer, target);
        CHECK(r1[i] == (uint8_t)async_value(round, phase, writer, target, 0, i),
              "%s: 1-byte value %d of rank %d at rank %d", what, i, writer, target);
    }
}

static int64_t max_pending;
static void check_pending(agora_gptr_signal_t *s, int64_t most, const char *what)
{
    int64_t p = signal_pending(s);
    CHECK(p >= 0 && p <= most, "%s: %lld pending, expected 0..%lld", what, (long long)p, (long long)most);
    if (p > max_pending) max_pending = p;
}

static void wait_zero(agora_gptr_signal_t *s, const char *what)
{
    OK(agora_gptr_signal_wait(s));
    CHECK(signal_pending(s) == 0, "%s: %lld pending after agora_signal_wait", what, (long long)signal_pending(s));
}

static void test_async(void)
{
    /* Area A (one signal) and area B (the NULL signal) of each writer on every rank. */
    agora_gptr_t base = alloc_checked((size_t)2 * nr * kArea);
    int right = (me + 1) % nr, left = (me + nr - 1) % nr;
    agora_gptr_signal_t s, s2;
    OK(agora_gptr_signal_init(&s));
    OK(agora_gptr_signal_init(&s2));
    CHECK(signal_pending(&s) == 0, "a new signal has %lld pending", (long long)signal_pending(&s));
    wait_zero(&s, "a new signal");
    OK(agora_gptr_sync());
    OK(agora_gptr_stats_reset());
    FAILS(agora_gptr_signal_init(NULL), AGORA_ERR_INVALID_ARGUMENT);
    FAILS(agora_gptr_signal_wait(NULL), AGORA_ERR_INVALID_ARGUMENT);
    CHECK(signal_pending(NULL) < 0, "agora_signal_pending(NULL) = %lld", (long long)signal_pending(NULL));

    for (int round = 0; round < 3; ++round) {
        int targets[2] = {right, me};
        for (int t = 0; t < 2; ++t) {
            int target = targets[t];
            agora_gptr_t a = agora_gptr_add(agora_gptr_on(base, target), (int64_t)me * kArea);
            agora_gptr_t b = agora_gptr_add(agora_gptr_on(base, target), (int64_t)(nr + me) * kArea);
            /* 4 x kK writes on one signal, then as many reads into distinct locals. */
            async_writes(a, round, 0, me, target, &s);
            check_pending(&s, 4 * kK, "writes");
            wait_zero(&s, "writes");
            async_reads(a, &s);
            check_pending(&s, 4 * kK, "reads");
            wait_zero(&s, "reads");
            async_check(round, 0, me, target, "reads after the writes' signal");
            /* Writes and reads of the same locations on one signal, no wait
             * between: each read follows its write in program order. */
            async_writes(a, round, 1, me, target, &s);
            async_reads(a, &s);
            check_pending(&s, 8 * kK, "writes then reads");
            wait_zero(&s, "writes then reads");
            async_check(round, 1, me, target, "reads issued after the writes");
            /* The NULL signal: agora_gptr_sync. */
            async_writes(b, round, 2, me, target, NULL);
            async_reads(b, NULL);
            OK(agora_gptr_sync());
            async_check(round, 2, me, target, "NULL-signal reads after agora_gptr_sync");
            /* Two signals at once: writes on s2, reads on s; waited in the other order. */
            async_writes(a, round, 3, me, target, &s2);
            async_reads(a, &s);
            wait_zero(&s, "reads on the second signal");
            async_check(round, 3, me, target, "reads on one signal after writes on another");
            wait_zero(&s2, "writes on the second signal");
        }
        OK(agora_barrier());
        /* The left neighbour's writes to this rank, seen here. */
        async_reads(agora_gptr_add(agora_gptr_on(base, me), (int64_t)left * kArea), &s);
        wait_zero(&s, "reads of the left neighbour's writes");
        async_check(round, 3, left, me, "the left neighbour's writes after a barrier");
        async_reads(agora_gptr_add(agora_gptr_on(base, me), (int64_t)(nr + left) * kArea), NULL);
        OK(agora_gptr_sync());
        async_check(round, 2, left, me, "the left neighbour's NULL-signal writes after a barrier");
        /* ... and the right neighbour's own area there, by this rank. */
        async_reads(agora_gptr_add(agora_gptr_on(base, right), (int64_t)right * kArea), &s);
        wait_zero(&s, "reads of the right neighbour's writes to itself");
        async_check(round, 3, right, right, "the right neighbour's writes to itself after a barrier");
        OK(agora_barrier());
    }
    if (me == 0) printf("gptr async: at most %lld operations seen pending on a signal\n", (long long)max_pending);
    check_counts("async");
    /* Exact counts: every operation once, the ones to this rank as local. */
    agora_gptr_stats_t st;
    OK(agora_gptr_stats(&st));
    CHECK(st.reads == issued_reads && st.writes == issued_writes && st.local == issued_local && st.stores == 0,
          "counted %llu reads, %llu writes, %llu local, %llu stores; issued %llu, %llu, %llu, 0",
          (unsigned long long)st.reads, (unsigned long long)st.writes, (unsigned long long)st.local,
          (unsigned long long)st.stores, (unsigned long long)issued_reads, (unsigned long long)issued_writes,
          (unsigned long long)issued_local);
    /* Operations still outstanding at agora_finalize (never waited for):
     * it completes them (the buffers are static, so they outlive it). */
    async_writes(agora_gptr_add(agora_gptr_on(base, right), (int64_t)me * kArea), 9, 0, me, right, NULL);
    static agora_gptr_signal_t outstanding; /* the engine completes it at finalize, after this function */
    OK(agora_gptr_signal_init(&outstanding));
    async_reads(agora_gptr_add(agora_gptr_on(base, left), (int64_t)left * kArea), &outstanding);
    async_reads(agora_gptr_add(agora_gptr_on(base, right), (int64_t)me * kArea), NULL);
}

/* ---- bulk --------------------------------------------------------------- */

enum { kGuard = 32 };
static uint64_t slot_bytes; /* room for the largest case at the largest offset, and its guard */
static uint64_t bulk_max;
static uint8_t *bulk_src, *bulk_dst;
static agora_gptr_t bulk_base;

/* The cases one writer runs on one slot: puts (guards, then data) and gets
 * checked against `shadow`, which they keep up to date. With io == 0 only
 * the shadow is computed (what the slot must hold afterwards). The home of
 * slot 0 is the writer, that of slot 1 its right neighbour. */
static void bulk_cases(int writer, int slot, uint8_t *shadow, int io)
{
    static const uint64_t sizes[] = {1, 7, 63, 65, 4097, 100003, (1u << 20) + 13};
    static const uint64_t offsets[] = {0, 1, 62, 4093, 32765, 65535, 131071};
    int home = slot == 0 ? writer : (writer + 1) % nr;
    int c = 0;
    for (unsigned si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
        uint64_t size = sizes[si];
        if (size > bulk_max) continue;
        for (unsigned oi = 0; oi < sizeof offsets / sizeof *offsets; ++oi, ++c) {
            int variant = c % 4, ma = c % 8, mb = (c * 3 + 1) % 8;
            if (size > 200000) { /* the biggest: 4 offsets, one per variant */
                static const int big_variant[] = {2, 0, -1, -1, 1, -1, 3};
                if ((variant = big_variant[oi]) < 0) continue;
            }
            uint64_t off = offsets[oi];
            uint64_t lo = off < kGuard ? 0 : off - kGuard;
            uint64_t hi = off + size + kGuard > slot_bytes ? slot_bytes : off + size + kGuard;
            uint64_t seed = mix(((uint64_t)writer * 2 + slot) * 1000 + c);
            /* Guards, then the data, in the shadow. */
            fill(shadow + lo, seed ^ 1, lo, off - lo);
            fill(shadow + off + size, seed ^ 1, off + size, hi - off - size);
            fill(shadow + off, seed, off, size);
            if (!io) continue;
            agora_gptr_t at = agora_gptr_add(agora_gptr_on(bulk_base, home), (int64_t)slot * slot_bytes);
            uint8_t *src = bulk_src + ma, *dst = bulk_dst + mb;
            OK(agora_gptr_put(agora_gptr_add(at, lo), shadow + lo, off - lo));
            OK(agora_gptr_put(agora_gptr_add(at, off + size), shadow + off + size, hi - off - size));
            memcpy(src, shadow + off, size);
            memset(dst, 0xee, hi - lo);
            agora_gptr_signal_t s;
            OK(agora_gptr_signal_init(&s));
            switch (variant) {
            case 0:
                OK(agora_gptr_put(agora_gptr_add(at, off), src, size));
                memset(src, 0x11, size); /* free once put returns */
                OK(agora_gptr_get(dst, agora_gptr_add(at, lo), hi - lo));
                break;
            case 1:
                OK(agora_gptr_put_async(agora_gptr_add(at, off), src, size, &s));
                check_pending(&s, 1 + size, "put_async");
                wait_zero(&s, "put_async");
                memset(src, 0x22, size);
                OK(agora_gptr_get_async(dst, agora_gptr_add(at, lo), hi - lo, &s));
                wait_zero(&s, "get_async");
                break;
            case 2: /* the get follows the put in program order: no sync between */
                OK(agora_gptr_put_async(agora_gptr_add(at, off), src, size, NULL));
                OK(agora_gptr_get_async(dst, agora_gptr_add(at, lo), hi - lo, NULL));
                OK(agora_gptr_sync());
                break;
            case 3:
                OK(agora_gptr_put_async(agora_gptr_add(at, off), src, size, &s));
                OK(agora_gptr_get_async(dst, agora_gptr_add(at, lo), hi - lo, &s));
                wait_zero(&s, "put_async then get_async");
                break;
            }
            SAME(dst, shadow + lo, hi - lo,
                 "bulk case %d (variant %d): %llu bytes at offset %llu of rank %d slot %d, buffers +%d/+%d, read back "
                 "with %llu guard bytes around",
                 c, variant, (unsigned long long)size, (unsigned long long)off, home, slot, ma, mb,
                 (unsigned long long)(hi - lo - size));
        }
    }
}

static void test_bulk(uint64_t max)
{
    bulk_max = max;
    slot_bytes = (131071 + max + kGuard + 65535) & ~65535ull;
    bulk_base = alloc_checked(2 * slot_bytes);
    bulk_src = malloc(max + 2 * kGuard + 16);
    bulk_dst = malloc(max + 2 * kGuard + 16);
    uint8_t *shadow[2] = {calloc(slot_bytes, 1), calloc(slot_bytes, 1)}, *expect = calloc(slot_bytes, 1),
            *got = malloc(slot_bytes + 8);
    CHECK(bulk_src && bulk_dst && shadow[0] && shadow[1] && expect && got, "out of memory");
    bulk_cases(me, 0, shadow[0], 1);
    bulk_cases(me, 1, shadow[1], 1);
    OK(agora_barrier());
    /* Each home reads its whole slots: slot 0 it wrote, slot 1 its left neighbour did. */
    int left = (me + nr - 1) % nr, right = (me + 1) % nr;
    bulk_cases(left, 1, expect, 0);
    agora_gptr_t mine = agora_gptr_on(bulk_base, me);
    OK(agora_gptr_get(got + 3, mine, slot_bytes));
    SAME(got + 3, shadow[0], slot_bytes, "slot 0 (written by this rank) after the barrier");
    OK(agora_gptr_get(got + 5, agora_gptr_add(mine, slot_bytes), slot_bytes));
    SAME(got + 5, expect, slot_bytes, "slot 1 (written by rank %d) after the barrier", left);
    if (!swcc) {
        const uint8_t *local = agora_gptr_to_local(mine);
        SAME(local, shadow[0], slot_bytes, "slot 0 through the local pointer");
        SAME(local + slot_bytes, expect, slot_bytes, "slot 1 (written by rank %d) through the local pointer", left);
    }
    /* ... and the slot this rank wrote on its right, once more from here. */
    OK(agora_gptr_get(got, agora_gptr_add(agora_gptr_on(bulk_base, right), slot_bytes), slot_bytes));
    SAME(got, shadow[1], slot_bytes, "slot 1 of rank %d after the barrier", right);
    OK(agora_barrier());
    free(bulk_src), free(bulk_dst), free(shadow[0]), free(shadow[1]), free(expect), free(got);
}

/* ---- store -------------------------------------------------------------- */

static uint64_t store_pieces(agora_gptr_t at, uint8_t *buf, uint64_t bytes, uint64_t seed, uint64_t *calls)
{
    static const uint64_t piece[] = {1, 2, 5, 8, 13, 64, 100, 1000, 4096, 33000, 3};
    fill(buf, seed, 0, bytes);
    for (uint64_t p = 0, j = 0; p < bytes; ++j) {
        uint64_t len = piece[j % (sizeof piece / sizeof *piece)];
        if (len > bytes - p) len = bytes - p;
        OK(agora_gptr_store(agora_gptr_add(at, (int64_t)p), buf + p, len));
        memset(buf + p, 0xdd, len); /* the buffer is free at return */
        p += len;
        ++*calls;
    }
    return bytes;
}

static void check_stored(agora_gptr_t at, uint64_t bytes, uint64_t seed, uint8_t *buf, uint8_t *want, const char *what)
{
    fill(want, seed, 0, bytes);
    memset(buf, 0xcc, bytes);
    OK(agora_gptr_get(buf, at, bytes));
    SAME(buf, want, bytes, "%s: %llu bytes stored", what, (unsigned long long)bytes);
    if (!swcc) SAME(agora_gptr_to_local(at), want, bytes, "%s: through the local pointer", what);
}

static void test_store(void)
{
    static const uint64_t sizes[] = {1, 7, 64, 4097, 100003, 65539};
    const uint64_t area = 256 << 10, off0 = 3;
    agora_gptr_t base = alloc_checked(2 * area);
    int right = (me + 1) % nr, left = (me + nr - 1) % nr;
    uint8_t *buf = malloc(area), *want = malloc(area);
    CHECK(buf && want, "out of memory");
    uint64_t calls = 0, expect_in = 0;
    OK(agora_gptr_stats_reset());
    OK(agora_gptr_store_sync(0)); /* nothing to wait for */
    OK(agora_barrier());
    for (unsigned r = 0; r < sizeof sizes / sizeof *sizes; ++r) {
        uint64_t k = sizes[r], kself = k / 3 + 1;
        /* Area 0 of the right neighbour, area 1 of this rank. */
        store_pieces(agora_gptr_add(agora_gptr_on(base, right), off0), buf, k, mix(me * 100 + r), &calls);
        store_pieces(agora_gptr_add(agora_gptr_on(base, me), area + off0), buf, kself, mix(me * 100 + r + 50), &calls);
        uint64_t in = k + kself; /* k from the left neighbour, kself from here */
        if (r % 2) {
            OK(agora_gptr_store_sync(in));
        } else {
            OK(agora_gptr_store_sync(in / 3));
            OK(agora_gptr_store_sync(in / 3));
            OK(agora_gptr_store_sync(in - 2 * (in / 3)));
        }
        expect_in += in;
        check_stored(agora_gptr_add(agora_gptr_on(base, me), off0), k, mix(left * 100 + r), buf, want,
                     "stores of the left neighbour after agora_gptr_store_sync");
        check_stored(agora_gptr_add(agora_gptr_on(base, me), area + off0), kself, mix(me * 100 + r + 50), buf, want,
                     "this rank's stores to itself after agora_gptr_store_sync");
        OK(agora_barrier());
    }
    /* A barrier makes stores visible without store_sync; a store_sync of
     * those bytes afterwards returns at once. */
    uint64_t k = 5000;
    store_pieces(agora_gptr_add(agora_gptr_on(base, right), off0 + 1), buf, k, mix(me * 100 + 99), &calls);
    OK(agora_barrier());
    check_stored(agora_gptr_add(agora_gptr_on(base, me), off0 + 1), k, mix(left * 100 + 99), buf, want,
                 "stores of the left neighbour after a barrier");
    OK(agora_gptr_store_sync(k));
    expect_in += k;
    agora_gptr_stats_t st;
    OK(agora_gptr_stats(&st));
    CHECK(st.stored_bytes_in == expect_in, "stored_bytes_in %llu, expected %llu",
          (unsigned long long)st.stored_bytes_in, (unsigned long long)expect_in);
    CHECK(st.stores == calls, "%llu stores counted, %llu made", (unsigned long long)st.stores,
          (unsigned long long)calls);
    OK(agora_barrier());
    free(buf), free(want);
}

/* ---- order -------------------------------------------------------------- */

enum { kWin = 200, kWinStart = 40, kWinSlot = 1024, kMaxRecs = 48 };

typedef struct {
    int used, target;
    agora_gptr_signal_t *signal; /* NULL: waited by agora_gptr_sync */
    uint32_t at, len;
    int is_put;
    union {
        uint64_t align;
        uint8_t b[kWin];
    } buf;              /* a read's destination or a put's source */
    uint8_t want[kWin]; /* a read: the bytes it must return */
} rec_t;

static rec_t recs[kMaxRecs];
static int nrecs;
static int targets[3], ntargets;
static uint8_t shadow[3][kWin];
static agora_gptr_t order_base;
static uint64_t order_op;

static agora_gptr_t window(int t)
{
    return agora_gptr_add(agora_gptr_on(order_base, targets[t]), me * kWinSlot + kWinStart);
}

static rec_t *new_rec(int t, agora_gptr_signal_t *s, uint32_t at, uint32_t len)
{
    /* Records stay where they are until settled: operations in flight write into them. */
    CHECK(nrecs < kMaxRecs, "too many records");
    rec_t *r = recs;
    while (r->used)
        ++r;
    nrecs++;
    r->used = 1, r->target = t, r->signal = s, r->at = at, r->len = len, r->is_put = 0;
    return r;
}

/* Waits for the records of one signal (NULL: agora_gptr_sync) and checks their reads. */
static void settle(agora_gptr_signal_t *s)
{
    if (s)
        wait_zero(s, "order");
    else
        OK(agora_gptr_sync());
    for (int i = 0; i < kMaxRecs; ++i) {
        rec_t *r = &recs[i];
        if (!r->used || r->signal != s) continue;
        if (!r->is_put)
            SAME(r->buf.b, r->want, r->len, "op %llu: split-phase read of %u bytes at %u of the window on rank %d",
                 (unsigned long long)order_op, r->len, r->at, targets[r->target]);
        r->used = 0;
        nrecs--;
    }
}

static void order_scalar_write(int t, uint32_t at, size_t w, int how, agora_gptr_signal_t *s)
{
    word_t v;
    v.l = rnd();
    agora_gptr_t g = agora_gptr_add(window(t), at);
    if (how == 0)
        OK(agora_gptr_write(g, &v, w));
    else
        OK(agora_gptr_write_async(g, &v, w, how == 1 ? s : NULL));
    memcpy(shadow[t] + at, v.b, w);
}

static void order_scalar_read(int t, uint32_t at, size_t w, int how, agora_gptr_signal_t *s)
{
    agora_gptr_t g = agora_gptr_add(window(t), at);
    if (how == 0) {
        word_t v = rd(g, w);
        SAME(v.b, shadow[t] + at, w, "op %llu: read of width %zu at %u of the window on rank %d",
             (unsigned long long)order_op, w, at, targets[t]);
        return;
    }
    rec_t *r = new_rec(t, how == 1 ? s : NULL, at, (uint32_t)w);
    memcpy(r->want, shadow[t] + at, w);
    memset(r->buf.b, 0xa5, w);
    OK(agora_gptr_read_async(g, r->buf.b, w, r->signal));
}

static void order_random(int ops, agora_gptr_signal_t *s)
{
    for (int op = 0; op < ops; ++op, ++order_op) {
        if (nrecs >= kMaxRecs - 1) {
            settle(s);
            settle(NULL);
        }
        int t = (int)below(ntargets);
        size_t w = (size_t)1 << below(4);
        uint32_t at = (uint32_t)(below(kWin / w) * w);
        uint32_t len = 1 + (uint32_t)below(kWin), from = (uint32_t)below(kWin - len + 1);
        agora_gptr_t g = agora_gptr_add(window(t), from);
        switch (below(14)) {
        case 0:
        case 1:
            order_scalar_write(t, at, w, (int)below(3), s);
            break;
        case 2:
        case 3:
        case 4:
            order_scalar_read(t, at, w, (int)below(3), s);
            break;
        case 5: { /* put */
            uint8_t src[kWin];
            for (uint32_t i = 0; i < len; ++i)
                src[i] = (uint8_t)rnd();
            OK(agora_gptr_put(g, src, len));
            memcpy(shadow[t] + from, src, len);
            break;
        }
        case 6:
        case 7: { /* put_async: its source stays untouched until settled */
            rec_t *r = new_rec(t, below(2) ? s : NULL, from, len);
            r->is_put = 1;
            for (uint32_t i = 0; i < len; ++i)
                r->buf.b[i] = (uint8_t)rnd();
            OK(agora_gptr_put_async(g, r->buf.b, len, r->signal));
            memcpy(shadow[t] + from, r->buf.b, len);
            break;
        }
        case 8: { /* one-way store */
            uint8_t src[kWin];
            for (uint32_t i = 0; i < len; ++i)
                src[i] = (uint8_t)rnd();
            OK(agora_gptr_store(g, src, len));
            memcpy(shadow[t] + from, src, len);
            memset(src, 0, len); /* free at return */
            break;
        }
        case 9: { /* get */
            uint8_t dst[kWin + 8];
            OK(agora_gptr_get(dst + (op & 7), g, len));
            SAME(dst + (op & 7), shadow[t] + from, len, "op %llu: get of %u bytes at %u of the window on rank %d",
                 (unsigned long long)order_op, len, from, targets[t]);
            break;
        }
        case 10:
        case 11: { /* get_async */
            rec_t *r = new_rec(t, below(2) ? s : NULL, from, len);
            memcpy(r->want, shadow[t] + from, len);
            memset(r->buf.b, 0xa5, len);
            OK(agora_gptr_get_async(r->buf.b, g, len, r->signal));
            break;
        }
        case 12:
            settle(s);
            break;
        case 13:
            settle(NULL);
            break;
        }
    }
    settle(s);
    settle(NULL);
}

static void test_order(int ops)
{
    order_base = alloc_checked((size_t)nr * kWinSlot);
    rnd_state = mix(1000 + me);
    int right = (me + 1) % nr, left = (me + nr - 1) % nr;
    ntargets = 0;
    targets[ntargets++] = me;
    targets[ntargets++] = right;
    if (left != right) targets[ntargets++] = left;
    agora_gptr_signal_t s;
    OK(agora_gptr_signal_init(&s));

    for (int t = 0; t < ntargets; ++t) {
        agora_gptr_t g = window(t);
        uint8_t buf[kWin + 8];
        /* A put, then scalar reads of every width at every offset. */
        for (int i = 0; i < kWin; ++i)
            shadow[t][i] = (uint8_t)rnd();
        OK(agora_gptr_put(g, shadow[t], kWin));
        for (size_t w = 1; w <= 8; w *= 2)
            for (uint32_t at = 0; at < kWin; at += (uint32_t)w)
                order_scalar_read(t, at, w, 0, &s);
        /* Scalar writes of every word, then a get of them all. */
        for (uint32_t at = 0; at < kWin; at += 8)
            order_scalar_write(t, at, 8, (at / 8) % 3, &s);
        OK(agora_gptr_get(buf + 1, g, kWin));
        SAME(buf + 1, shadow[t], kWin, "get after scalar writes of every word, window on rank %d", targets[t]);
        settle(&s);
        /* Narrow split-phase writes, then wider reads over them: first into
         * lines a barrier dropped (only the written bytes are cached), then
         * into lines read before. */
        OK(agora_barrier());
        for (uint32_t at = 0; at < kWin; at += 8) {
            order_scalar_write(t, at + 1, 1, 2, &s);
            order_scalar_read(t, at, 8, 0, &s);
            order_scalar_write(t, at + 6, 2, 1, &s);
            order_scalar_read(t, at + 4, 4, 1, &s);
            if (nrecs > kMaxRecs - 4) settle(&s), settle(NULL);
        }
        settle(&s);
        settle(NULL);
        OK(agora_barrier());
        uint8_t partial[kWin];
        for (uint32_t at = 0; at < kWin; at += 8)
            order_scalar_write(t, at + 3, 1, 1, &s);
        OK(agora_gptr_get(partial, g, kWin));
        SAME(partial, shadow[t], kWin, "get after 1-byte split-phase writes into dropped lines, window on rank %d",
             targets[t]);
        settle(&s);
        for (uint32_t at = 0; at < kWin; at += 8) {
            order_scalar_write(t, at + 1, 1, 2, &s);
            order_scalar_write(t, at + 2, 2, 1, &s);
            order_scalar_read(t, at, 8, 0, &s);
            order_scalar_write(t, at + 4, 4, 2, &s);
            order_scalar_read(t, at, 8, 1, &s);
            order_scalar_read(t, at + 4, 4, 2, &s);
            if (nrecs > kMaxRecs - 4) settle(&s), settle(NULL);
        }
        settle(&s);
        settle(NULL);
        /* A split-phase read, then a write of the same word, then a read: old, new. */
        for (uint32_t at = 0; at < kWin; at += 8) {
            order_scalar_read(t, at, 8, 1, &s);
            order_scalar_write(t, at, 8, 1, &s);
            order_scalar_read(t, at, 8, 1, &s);
            if (nrecs > kMaxRecs - 4) settle(&s);
        }
        settle(&s);
        /* get_async then put_async of the same bytes: the get sees the old ones. */
        rec_t *r = new_rec(t, &s, 0, kWin);
        memcpy(r->want, shadow[t], kWin);
        OK(agora_gptr_get_async(r->buf.b, g, kWin, &s));
        rec_t *p = new_rec(t, &s, 0, kWin);
        p->is_put = 1;
        for (int i = 0; i < kWin; ++i)
            p->buf.b[i] = (uint8_t)rnd();
        OK(agora_gptr_put_async(g, p->buf.b, kWin, &s));
        memcpy(shadow[t], p->buf.b, kWin);
        order_scalar_read(t, 16, 8, 1, &s);
        settle(&s);
    }
    order_random(ops, &s);
    OK(agora_barrier());
    /* The windows still hold what the shadow says, read after the barrier. */
    for (int t = 0; t < ntargets; ++t) {
        uint8_t buf[kWin];
        OK(agora_gptr_get(buf, window(t), kWin));
        SAME(buf, shadow[t], kWin, "window on rank %d after the barrier", targets[t]);
    }
    OK(agora_barrier());
    check_counts("order");
}

/* ---- visibility --------------------------------------------------------- */

enum { kChunk = 16, kShared = 128 };

/* The 15 bytes rank `writer` writes to `home` in round r: 8 + 4 + 2 + 1. */
static void vis_bytes(int r, int writer, int home, uint8_t *b)
{
    fill(b, mix((uint64_t)r * 4096 + writer * 64 + home), 0, 15);
}

static void test_visibility(int rounds, int incs)
{
    agora_gptr_t base = alloc_checked(4096);
    agora_gptr_signal_t s;
    OK(agora_gptr_signal_init(&s));
    /* Every rank's 16 bytes in one 64-byte line of every home (false sharing). */
    for (int r = 0; r < rounds; ++r) {
        for (int home = 0; home < nr; ++home) {
            agora_gptr_t g = agora_gptr_add(agora_gptr_on(base, home), kShared + me * kChunk);
            uint8_t b[16];
            vis_bytes(r, me, home, b);
            int mode = (r + home + me) % 5;
            switch (mode) {
            case 0:
                wr(g, b, 8), wr(agora_gptr_add(g, 8), b + 8, 4), wr(agora_gptr_add(g, 12), b + 12, 2),
                    wr(agora_gptr_add(g, 14), b + 14, 1);
                break;
            case 1:
            case 2: {
                static const size_t w[] = {8, 4, 2, 1};
                static const int at[] = {0, 8, 12, 14};
                for (int i = 0; i < 4; ++i) {
                    word_t v;
                    memcpy(v.b, b + at[i], w[i]);
                    OK(agora_gptr_write_async(agora_gptr_add(g, at[i]), &v, w[i], mode == 1 ? NULL : &s));
                }
                break; /* not waited for: the barrier is */
            }
            case 3:
                OK(agora_gptr_put(g, b, 15));
                break;
            case 4:
                OK(agora_gptr_store(g, b, 15));
                break;
            }
        }
        OK(agora_barrier());
        CHECK(signal_pending(&s) == 0, "round %d: %lld operations pending after a barrier", r,
              (long long)signal_pending(&s));
        OK(agora_gptr_sync());
        for (int home = 0; home < nr; ++home)
            for (int writer = 0; writer < nr; ++writer) {
                agora_gptr_t g = agora_gptr_add(agora_gptr_on(base, home), kShared + writer * kChunk);
                uint8_t want[16], got[16];
                vis_bytes(r, writer, home, want);
                if ((r + writer) % 2) {
                    OK(agora_gptr_get(got, g, 15));
                } else {
                    word_t v = rd(g, 8);
                    memcpy(got, v.b, 8);
                    v = rd(agora_gptr_add(g, 8), 4), memcpy(got + 8, v.b, 4);
                    v = rd(agora_gptr_add(g, 12), 2), memcpy(got + 12, v.b, 2);
                    v = rd(agora_gptr_add(g, 14), 1), memcpy(got + 14, v.b, 1);
                }
                SAME(got, want, 15, "round %d: rank %d's writes to rank %d after the barrier", r, writer, home);
                if (home == me && !swcc)
                    SAME((uint8_t *)agora_gptr_to_local(g), want, 15,
                         "round %d: rank %d's writes through the local pointer", r, writer);
            }
        OK(agora_barrier());
    }

    /* Counters incremented under locks: A (8 bytes, read + write) under L1;
     * B (4 bytes, read + write_async not waited for) and C (8 bytes, get +
     * put, in A's line) under L2. */
    agora_lock_t *l1 = test_lock_create(), *l2 = test_lock_create();
    CHECK(l1 && l2, "agora_lock_create failed");
    agora_gptr_t ca = agora_gptr_add(agora_gptr_on(base, nr - 1), 0);
    agora_gptr_t cc = agora_gptr_add(agora_gptr_on(base, nr - 1), 16);
    agora_gptr_t cb = agora_gptr_add(agora_gptr_on(base, 0), 1024 + 4);
    uint64_t last_a = 0, last_c = 0;
    uint32_t last_b = 0;
    for (int i = 0; i < incs; ++i) {
        OK(agora_lock(l1));
        word_t v = rd(ca, 8);
        CHECK(v.l >= last_a, "counter A read %llu under the lock after this rank wrote %llu", (unsigned long long)v.l,
              (unsigned long long)last_a);
        last_a = v.l + 1;
        OK(agora_gptr_write(ca, &last_a, 8));
        OK(agora_unlock(l1));

        OK(agora_lock(l2));
        uint32_t b;
        OK(agora_gptr_read(cb, &b, 4));
        CHECK(b >= last_b, "counter B read %u under the lock after this rank wrote %u", b, last_b);
        last_b = b + 1;
        OK(agora_gptr_write_async(cb, &last_b, 4, NULL));
        uint64_t c;
        OK(agora_gptr_get(&c, cc, 8));
        CHECK(c >= last_c, "counter C read %llu under the lock after this rank wrote %llu", (unsigned long long)c,
              (unsigned long long)last_c);
        last_c = c + 1;
        OK(agora_gptr_put(cc, &last_c, 8));
        OK(agora_unlock(l2));
    }
    OK(agora_barrier());
    uint64_t total = (uint64_t)nr * incs;
    word_t a = rd(ca, 8), c = rd(cc, 8), b = rd(cb, 4);
    CHECK(a.l == total && c.l == total && b.i == total, "counters A %llu, B %u, C %llu; expected %llu each",
          (unsigned long long)a.l, b.i, (unsigned long long)c.l, (unsigned long long)total);
    OK(agora_barrier());
    check_counts("visibility");
}

/* ---- sharing ------------------------------------------------------------ */

/* Falsely shared bulk data: stripes of 37 bytes, stripe j of a region
 * owned by rank j % N, on two homes; every rank puts and gets its own
 * stripes (lines and blocks hold several ranks' bytes) with blocking and
 * split-phase transfers and checks them, then after each barrier every rank
 * reads whole regions and checks every rank's stripes. */
enum { kStripe = 37, kSharedBytes = 37 * 700 };

static void stripe_bytes(int round, int j, uint8_t *b) { fill(b, mix((uint64_t)round * 100000 + j), 0, kStripe); }

static void test_sharing(int rounds)
{
    agora_gptr_t base = alloc_checked(kSharedBytes);
    static uint8_t got[kSharedBytes], want[kSharedBytes];
    static uint8_t src[kSharedBytes / kStripe][kStripe];
    agora_gptr_signal_t s;
    OK(agora_gptr_signal_init(&s));
    int homes[2] = {0, nr - 1};
    for (int round = 0; round < rounds; ++round) {
        for (int hi = 0; hi < 2; ++hi) {
            agora_gptr_t region = agora_gptr_on(base, homes[hi]);
            int mode = (round + hi) % 3;
            for (int j = me; j < kSharedBytes / kStripe; j += nr) {
                agora_gptr_t at = agora_gptr_add(region, (int64_t)j * kStripe);
                stripe_bytes(round * 2 + hi, j, src[j]);
                if (mode == 0)
                    OK(agora_gptr_put(at, src[j], kStripe));
                else if (mode == 1)
                    OK(agora_gptr_put_async(at, src[j], kStripe, &s));
                else
                    OK(agora_gptr_store(at, src[j], kStripe));
            }
            /* Read back this rank's stripes: its latest writes, whatever the others do. */
            for (int j = me; j < kSharedBytes / kStripe; j += nr)
                OK(agora_gptr_get_async(got + j * kStripe, agora_gptr_add(region, (int64_t)j * kStripe), kStripe, &s));
            wait_zero(&s, "stripes");
            for (int j = me; j < kSharedBytes / kStripe; j += nr)
                SAME(got + j * kStripe, src[j], kStripe, "round %d: stripe %d on rank %d read back by its writer",
                     round, j, homes[hi]);
        }
        OK(agora_barrier());
        for (int hi = 0; hi < 2; ++hi) {
            for (int j = 0; j < kSharedBytes / kStripe; ++j)
                stripe_bytes(round * 2 + hi, j, want + j * kStripe);
            memset(got, 0, sizeof got);
            OK(agora_gptr_get(got, agora_gptr_on(base, homes[hi]), kSharedBytes));
            SAME(got, want, kSharedBytes, "round %d: the falsely shared region on rank %d after the barrier", round,
                 homes[hi]);
            if (homes[hi] == me && !swcc)
                SAME(agora_gptr_to_local(base), want, kSharedBytes, "round %d: the region through the local pointer",
                     round);
        }
        OK(agora_barrier());
    }
}

/* ---- threads ------------------------------------------------------------ */

/* Fork-join threads (agora_thread_create from rank 0, on every rank) each
 * access their own window on every home, blocking and split-phase on their
 * own signal and on their implicit one (agora_gptr_sync is per thread),
 * each read checked against the thread's latest write. */
enum { kThreadWin = 256, kThreadSlot = 1024, kThreadRecs = 32 };
static agora_gptr_t thread_base;
static int thread_ops;

static void *gptr_thread(void *arg)
{
    int k = (int)(intptr_t)arg, homes = nr < 4 ? nr : 4;
    uint64_t state = mix(5000 + k);
    static _Thread_local uint8_t shadow_t[4][kThreadWin];
    struct {
        int used;
        agora_gptr_signal_t *signal;
        uint32_t w;
        word_t got, want;
    } recs_t[kThreadRecs];
    memset(shadow_t, 0, sizeof shadow_t);
    memset(recs_t, 0, sizeof recs_t);
    agora_gptr_signal_t s;
    OK(agora_gptr_signal_init(&s));
    for (int op = 0; op < thread_ops; ++op) {
        uint64_t r = mix(state++);
        int t = (int)(r % homes);
        agora_gptr_t g = agora_gptr_add(agora_gptr_on(thread_base, t), (int64_t)k * kThreadSlot);
        size_t w = (size_t)1 << ((r >> 8) % 4);
        uint32_t at = (uint32_t)(((r >> 16) % (kThreadWin / w)) * w);
        agora_gptr_signal_t *sig = (r >> 40) & 1 ? &s : NULL;
        switch ((r >> 32) % 7) {
        case 0:
        case 1: {
            word_t v = {.l = mix(r)};
            if ((r >> 32) % 7 == 0)
                OK(agora_gptr_write(agora_gptr_add(g, at), &v, w));
            else
                OK(agora_gptr_write_async(agora_gptr_add(g, at), &v, w, sig));
            memcpy(shadow_t[t] + at, v.b, w);
            break;
        }
        case 2: {
            uint8_t src[64];
            uint32_t len = 1 + (uint32_t)((r >> 44) % 64), from = (uint32_t)((r >> 50) % (kThreadWin - len + 1));
            for (uint32_t i = 0; i < len; ++i)
                src[i] = (uint8_t)mix(r + i);
            OK(agora_gptr_put(agora_gptr_add(g, from), src, len));
            memcpy(shadow_t[t] + from, src, len);
            break;
        }
        case 3:
        case 4: {
            word_t v = rd(agora_gptr_add(g, at), w);
            SAME(v.b, shadow_t[t] + at, w, "thread %d op %d: read of width %zu at %u on rank %d", k, op, w, at, t);
            break;
        }
        default: {
            int i = 0;
            while (i < kThreadRecs && recs_t[i].used)
                ++i;
            if (i == kThreadRecs) {
                wait_zero(&s, "thread");
                OK(agora_gptr_sync());
                for (int j = 0; j < kThreadRecs; ++j) {
                    SAME(recs_t[j].got.b, recs_t[j].want.b, recs_t[j].w, "thread %d: split-phase read", k);
                    recs_t[j].used = 0;
                }
                i = 0;
            }
            recs_t[i].used = 1, recs_t[i].w = (uint32_t)w, recs_t[i].signal = sig;
            recs_t[i].got.l = 0x5a5a5a5a5a5a5a5aull;
            memcpy(recs_t[i].want.b, shadow_t[t] + at, w);
            OK(agora_gptr_read_async(agora_gptr_add(g, at), recs_t[i].got.b, w, sig));
        }
        }
    }
    wait_zero(&s, "thread");
    OK(agora_gptr_sync());
    for (int j = 0; j < kThreadRecs; ++j)
        if (recs_t[j].used) SAME(recs_t[j].got.b, recs_t[j].want.b, recs_t[j].w, "thread %d: split-phase read", k);
    for (int t = 0; t < homes; ++t) {
        uint8_t got[kThreadWin];
        OK(agora_gptr_get(got, agora_gptr_add(agora_gptr_on(thread_base, t), (int64_t)k * kThreadSlot), kThreadWin));
        SAME(got, shadow_t[t], kThreadWin, "thread %d: its window on rank %d at the end", k, t);
    }
    return (void *)(intptr_t)(k + 1);
}

static void test_threads(int ops)
{
    thread_ops = ops;
    thread_base = alloc_checked(64 * kThreadSlot);
    if (me != 0) return; /* agora_finalize runs the threads placed here */
    int n = agora_thread_slots();
    CHECK(n >= 2 && n <= 64, "%d thread slots", n);
    agora_thread_t th[64];
    for (int k = 0; k < n; ++k)
        OK(agora_thread_create(&th[k], gptr_thread, (void *)(intptr_t)k));
    for (int k = 0; k < n; ++k) {
        void *ret = NULL;
        OK(agora_thread_join(th[k], &ret));
        CHECK(ret == (void *)(intptr_t)(k + 1), "thread %d returned %p", k, ret);
    }
}

/* ---- errors ------------------------------------------------------------- */

/* Every rank makes the refused calls, or (`only0`) rank 0 alone, so that
 * its messages reach mpirun's output whole: mpirun may split a line of one
 * rank to put another rank's output in between. */
static void test_errors(int only0)
{
    uint64_t v = 0;
    agora_gptr_signal_t s;
    OK(agora_gptr_signal_init(&s));
    agora_gptr_t g0 = agora_gptr_make(0, 0);
    int refuse = !only0 || me == 0;
    /* Before any agora_gptr_alloc. */
    if (refuse) {
        FAILS(agora_gptr_read(g0, &v, 8), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_write(g0, &v, 8), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_read_async(g0, &v, 8, &s), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_write_async(g0, &v, 8, NULL), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_get(&v, g0, 8), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_put(g0, &v, 8), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_store(g0, &v, 8), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_store_sync(8), AGORA_ERR_BAD_POINTER);
    }
    CHECK(agora_gptr_to_local(g0) == NULL, "to_local before any allocation");
    CHECK(agora_gptr_from_local(&v) == AGORA_GPTR_NULL, "from_local before any allocation");
    CHECK(signal_pending(&s) == 0, "a refused access counted on its signal");
    OK(agora_gptr_sync());
    OK(agora_gptr_signal_wait(&s));

    /* A segment too small: NULL on every rank, and allocation goes on. */
    agora_gptr_t refused = 0;
    CHECK(agora_gptr_mem_alloc((size_t)1 << 40, &refused) == AGORA_ERR_NO_MEMORY && refused == AGORA_GPTR_NULL,
          "a 1 TiB allocation in the segment");
    CHECK(agora_gptr_mem_alloc(SIZE_MAX, &refused) == AGORA_ERR_NO_MEMORY && refused == AGORA_GPTR_NULL,
          "agora_gptr_mem_alloc(SIZE_MAX)");
    CHECK(agora_gptr_mem_alloc(64, NULL) == AGORA_ERR_INVALID_ARGUMENT, "agora_gptr_mem_alloc with a NULL out");

    agora_gptr_t base = alloc_checked(100); /* 64 KiB allocated */
    CHECK(agora_gptr_offset(base) == 0, "the first allocation is at offset %llu",
          (unsigned long long)agora_gptr_offset(base));
    int right = (me + 1) % nr;
    agora_gptr_t rb = agora_gptr_on(base, right);
    uint8_t buf[64];
    agora_gptr_stats_t before, after;
    OK(agora_barrier());
    OK(agora_gptr_stats(&before));
    /* Collective: a local buffer in page-based global memory, used below. */
    uint8_t *global = test_alloc(4096);
    CHECK(global, "agora_alloc failed");

    if (refuse) {
        /* Ranks outside 0..N-1. */
        FAILS(agora_gptr_read(agora_gptr_make(nr, 0), &v, 8), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_write(agora_gptr_make(nr + 7, 8), &v, 8), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_read(AGORA_GPTR_NULL, &v, 1), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_get(buf, agora_gptr_make(-1, 0), 4), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_put(agora_gptr_make(nr, 0), buf, 4), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_store(agora_gptr_make(nr, 0), buf, 4), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_read_async(agora_gptr_make(nr, 0), &v, 8, &s), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_get_async(buf, agora_gptr_make(nr, 0), 8, NULL), AGORA_ERR_BAD_POINTER);
        /* Beyond the allocated extent (64 KiB), on another rank and this one. */
        FAILS(agora_gptr_write(agora_gptr_add(rb, 65536), &v, 8), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_read(agora_gptr_add(base, 65536), &v, 1), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_get(buf, agora_gptr_add(rb, 65535), 2), AGORA_ERR_BAD_POINTER);
        {
            uint8_t *big = malloc(65537);
            CHECK(big, "out of memory");
            FAILS(agora_gptr_get(big, rb, 65537), AGORA_ERR_BAD_POINTER);
            FAILS(agora_gptr_put_async(rb, big, 65537, &s), AGORA_ERR_BAD_POINTER);
            free(big);
        }
        FAILS(agora_gptr_get(buf, agora_gptr_add(rb, (1ull << 48) - 4), 8), AGORA_ERR_BAD_POINTER); /* wraps */
        FAILS(agora_gptr_store(agora_gptr_add(rb, 1ull << 40), buf, 1), AGORA_ERR_BAD_POINTER);
        /* Misaligned scalars (bulk transfers may be misaligned). */
        FAILS(agora_gptr_read(agora_gptr_add(rb, 4), &v, 8), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_write(agora_gptr_add(rb, 2), &v, 4), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_read_async(agora_gptr_add(base, 1), &v, 2, &s), AGORA_ERR_BAD_POINTER);
        FAILS(agora_gptr_write_async(agora_gptr_add(rb, 7), &v, 8, NULL), AGORA_ERR_BAD_POINTER);
        /* Widths other than 1, 2, 4, 8. */
        FAILS(agora_gptr_read(rb, &v, 3), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_gptr_write(base, &v, 3), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_gptr_read_async(rb, &v, 0, &s), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_gptr_write_async(rb, buf, 16, NULL), AGORA_ERR_INVALID_ARGUMENT);
        /* No local buffer. */
        FAILS(agora_gptr_read(rb, NULL, 8), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_gptr_get(NULL, rb, 8), AGORA_ERR_INVALID_ARGUMENT);
        /* A local buffer in page-based global memory (agora_alloc). */
        FAILS(agora_gptr_read(rb, global, 8), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_gptr_get(global + 8, rb, 16), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_gptr_put(rb, global, 16), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_gptr_get_async(global, base, 16, &s), AGORA_ERR_INVALID_ARGUMENT);
        FAILS(agora_gptr_store(rb, global + 100, 3), AGORA_ERR_INVALID_ARGUMENT);
    }

    /* Nothing was sent or counted, and the signals owe nothing. */
    OK(agora_gptr_stats(&after));
    CHECK(signal_pending(&s) == 0, "refused accesses left %lld pending", (long long)signal_pending(&s));
    OK(agora_gptr_sync());
    CHECK(after.requests == before.requests && after.reads == before.reads && after.writes == before.writes &&
              after.stores == before.stores && after.local == before.local,
          "refused accesses were counted: requests %llu -> %llu, reads %llu -> %llu, writes %llu -> %llu",
          (unsigned long long)before.requests, (unsigned long long)after.requests, (unsigned long long)before.reads,
          (unsigned long long)after.reads, (unsigned long long)before.writes, (unsigned long long)after.writes);

    /* The edges themselves are fine (a transfer of 0 bytes too), and the memory still works. */
    OK(agora_gptr_put(agora_gptr_add(rb, 65536), buf, 0));
    OK(agora_gptr_get(buf, agora_gptr_add(rb, 65536), 0));
    word_t w;
    w.l = 0x0102030405060708ull + me;
    OK(agora_gptr_write(agora_gptr_add(rb, 65520), &w, 8));
    uint8_t last = 0x77;
    OK(agora_gptr_write(agora_gptr_add(base, 65535), &last, 1));
    OK(agora_barrier());
    int left = (me + nr - 1) % nr;
    CHECK(rd(agora_gptr_add(base, 65520), 8).l == 0x0102030405060708ull + left, "a word near the end of the extent");
    CHECK(rd(agora_gptr_add(rb, 65535), 1).b[0] == 0x77, "the last byte of the extent");
    OK(agora_barrier());

    /* The end of the segment (AGORA_GPTR_SEGMENT, 256 MiB by default; 64
     * KiB of it used): one byte too many is refused, the rest is
     * allocated, and its last byte works; a 0-byte allocation still
     * returns a pointer. */
    const char *segment = getenv("AGORA_GPTR_SEGMENT");
    uint64_t segment_bytes = 256ull << 20;
    if (segment) {
        char *unit;
        segment_bytes = strtoull(segment, &unit, 10);
        int shift = *unit == 'K' ? 10 : *unit == 'M' ? 20 : *unit == 'G' ? 30 : 0;
        CHECK(strchr("KMG", *unit) || !*unit, "AGORA_GPTR_SEGMENT=%s: the test reads K, M or G only", segment);
        segment_bytes <<= shift;
    }
    if (segment_bytes % 65536 == 0) {
        uint64_t rest = segment_bytes - 65536;
        CHECK(gptr_alloc(rest + 1) == AGORA_GPTR_NULL, "an allocation one byte beyond the segment");
        agora_gptr_t tail = alloc_checked(rest);
        CHECK(agora_gptr_offset(tail) == 65536, "the rest of the segment at offset %llu",
              (unsigned long long)agora_gptr_offset(tail));
        agora_gptr_t end = agora_gptr_add(agora_gptr_on(tail, right), (int64_t)rest - 8);
        w.l = 0xfeedfacecafe0000ull + me;
        OK(agora_gptr_write(end, &w, 8));
        CHECK(rd(end, 8).l == w.l, "the last word of the segment");
        if (refuse) FAILS(agora_gptr_read(agora_gptr_add(end, 8), &v, 1), AGORA_ERR_BAD_POINTER);
        /* Transfers of 0 bytes at the very end of the segment move nothing
         * (ordercache filled the line there, beyond the home's segment). */
        OK(agora_gptr_get(buf, agora_gptr_add(end, 8), 0));
        OK(agora_gptr_get_async(buf, agora_gptr_add(end, 8), 0, &s));
        OK(agora_gptr_put(agora_gptr_add(end, 8), buf, 0));
        OK(agora_gptr_store(agora_gptr_add(end, 8), buf, 0));
        wait_zero(&s, "transfers of 0 bytes");
        agora_gptr_t empty = gptr_alloc(0);
        CHECK(empty != AGORA_GPTR_NULL, "agora_gptr_alloc(0) in a full segment");
        agora_gptr_t full = 0;
        CHECK(agora_gptr_mem_alloc(1, &full) == AGORA_ERR_NO_MEMORY && full == AGORA_GPTR_NULL,
              "an allocation in a full segment");
        OK(agora_barrier());
        CHECK(rd(agora_gptr_add(tail, (int64_t)rest - 8), 8).l == 0xfeedfacecafe0000ull + left,
              "the last word of the segment, written by rank %d", left);
    }
    OK(agora_barrier());
}

/* Transfers of 0 bytes at the end of a segment that one allocation fills
 * (run with AGORA_GPTR_SEGMENT=1M): they move nothing. ordercache used to
 * fill the line there, which the home read beyond its segment (a SIGSEGV
 * when nothing was mapped after it). */
static void test_zero_end(void)
{
    const uint64_t segment = 1 << 20;
    agora_gptr_t base = alloc_checked(segment);
    uint8_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    agora_gptr_signal_t s;
    OK(agora_gptr_signal_init(&s));
    for (int d = 0; d < nr; ++d) {
        agora_gptr_t end = agora_gptr_add(agora_gptr_on(base, (me + d) % nr), (int64_t)segment);
        OK(agora_gptr_get(buf, end, 0));
        OK(agora_gptr_get_async(buf, end, 0, &s));
        OK(agora_gptr_get_async(buf, end, 0, NULL));
        OK(agora_gptr_put(end, buf, 0));
        OK(agora_gptr_put_async(end, buf, 0, &s));
        OK(agora_gptr_store(end, buf, 0));
        wait_zero(&s, "transfers of 0 bytes");
        OK(agora_gptr_sync());
    }
    CHECK(buf[0] == 1 && buf[7] == 8, "a 0-byte get changed its buffer");
    OK(agora_barrier());
}

static void test_alloc_differ(void)
{
    agora_gptr_t g = gptr_alloc(me == 1 ? 8192 : 4096);
    (void)g;
    OK(agora_barrier());
    CHECK(0, "agora_gptr_alloc with different sizes was accepted");
}

/* Runs one sub-test with its own arguments; rank 0 says it passed. */
static void run_subtest(const char *test, int argc, char **argv)
{
    OK(agora_barrier());
    OK(agora_gptr_stats_reset());
    OK(agora_barrier());
    rnd_state = mix(77 + me);
    if (strcmp(test, "scalar") == 0)
        test_scalar();
    else if (strcmp(test, "async") == 0)
        test_async();
    else if (strcmp(test, "bulk") == 0)
        test_bulk(argc > 0 ? strtoull(argv[0], NULL, 0) : (1u << 20) + 13);
    else if (strcmp(test, "store") == 0)
        test_store();
    else if (strcmp(test, "order") == 0)
        test_order(argc > 0 ? atoi(argv[0]) : 8000);
    else if (strcmp(test, "visibility") == 0)
        test_visibility(argc > 0 ? atoi(argv[0]) : 30, argc > 1 ? atoi(argv[1]) : 300);
    else if (strcmp(test, "sharing") == 0)
        test_sharing(argc > 0 ? atoi(argv[0]) : 6);
    else if (strcmp(test, "threads") == 0)
        test_threads(argc > 0 ? atoi(argv[0]) : 3000);
    else if (strcmp(test, "errors") == 0)
        test_errors(argc > 0 && strcmp(argv[0], "only0") == 0);
    else if (strcmp(test, "zero_end") == 0)
        test_zero_end();
    else if (strcmp(test, "alloc_differ") == 0)
        test_alloc_differ();
    else
        CHECK(0, "unknown sub-test %s", test);
    OK(agora_barrier());
    if (me == 0) printf("PASS gptr %s on %d ranks under %s\n", test, nr, scheme);
}

int main(int argc, char **argv)
{
    agora_gptr_t early = 0;
    CHECK(agora_gptr_mem_alloc(64, &early) == AGORA_ERR_NOT_INITIALIZED && early == AGORA_GPTR_NULL,
          "agora_gptr_mem_alloc before agora_init");
    CHECK(agora_gptr_read(0, &(uint64_t){0}, 8) == AGORA_ERR_NOT_INITIALIZED, "agora_gptr_read before agora_init");
    OK(agora_init(&argc, &argv));
    me = agora_rank(), nr = agora_nranks();
    scheme = agora_gptr_scheme();
    swcc = is("swcc");
    const char *want = getenv("AGORA_GPTR");
    if (want) CHECK(strcmp(scheme, want) == 0, "agora_gptr_scheme() is %s, AGORA_GPTR=%s", scheme, want);
    CHECK(argc >= 2, "usage: gptr SUBTEST [ARGS] [SUBTEST [ARGS]]... where SUBTEST [ARGS] is scalar|async|"
                     "bulk [MAX]|store|order [OPS]|visibility [ROUNDS INCS]|sharing [ROUNDS]|threads [OPS]|"
                     "errors [only0]|zero_end|alloc_differ");
    CHECK(nr >= 2, "needs 2 ranks or more");
    /* Several sub-tests run one after the other in one job (one launch for
     * many checks); each starts from a barrier with its counters reset. */
    for (int i = 1; i < argc;) {
        const char *test = argv[i++];
        int first_arg = i;
        while (i < argc && ((argv[i][0] >= '0' && argv[i][0] <= '9') || strcmp(argv[i], "only0") == 0))
            ++i;
        run_subtest(test, i - first_arg, argv + first_arg);
    }
    OK(agora_finalize());
    return 0;
}
