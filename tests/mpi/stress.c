/* Randomized, seeded, data-race-free stress of global memory with exact
 * checking (issue 30, "Load and faults"). Fork-join: main on rank 0 starts
 * ranks x AGORA_THREADS_PER_RANK workers (worker w on rank w mod N) and joins
 * them; every value read is checked exactly.
 *
 * The data: LOCKS locks, each owning SLOTS words, SLOTS-1 counters and one
 * sum word that always equals the sum of its counters. Locks are grouped by 8
 * and a group's words interleaved (word j of lock k next to word j of lock
 * k+1), a group spanning 2 pages from the middle of a page: every page is
 * written by 16 locks (false sharing between locks), half the locks in a
 * block-placed array, half in a cyclic one. Each worker, with its own seeded
 * random generator, repeats one of:
 *   rmw     lock k (half the time one of 8 hot locks, sometimes by trylock),
 *           check k's sum, add 1..3 to 1..4 of k's counters and the sum, count
 *           what it added in a private shadow, unlock
 *   check   lock k, check the sum and that each counter is at least what this
 *           worker added to it (counters only grow), unlock
 *   nested  lock two locks in increasing order, check both, move one unit
 *           into each (rmw on both), unlock in reverse order
 * At PHASES points, the same for every worker, the workers run a barrier
 * phase: barrier; each writes its own region (REGION words, which share
 * pages with its neighbours') with values of (seed, phase, worker, index);
 * barrier; each reads every other worker's region exactly and checks the
 * sums of its share of the locks without locking (nobody writes them until
 * the next barrier); barrier. After the joins rank 0 checks every counter
 * against the sum of all workers' shadows, and every sum word.
 *
 * One line summarises: locked operations, words checked, wrong values; exit
 * status 1 if any value was wrong. Controls and faults:
 *   --inject-races    a quarter of the rmws skip the lock (a data race), with a
 *                     pause between the read and the write: wrong values must
 *                     be reported (lost updates and broken sums)
 *   --kill-rank R     the first worker on rank R kills its process (SIGKILL)
 *                     halfway through: the job must end naming rank R
 *   --kill-server     worker 0 kills the last memory server (SIGKILL) halfway
 *                     through (run with --memory-servers M)
 *   --final-locked    rank 0 takes each lock before its final check (tells
 *                     stores a lock carries from stores every reader sees)
 * Usage: test_stress [--ops N] [--seed S] [--phases P] [--locks L]
 *                    [--time SECONDS] [controls] */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rank_pid.h"

#define PAGE_WORDS 512
#define GROUP 8         /* locks whose words interleave */
#define SLOTS 128       /* words per lock: SLOTS-1 counters and the sum */
#define SUM (SLOTS - 1) /* the sum word's slot */
#define HOT 8           /* locks chosen half of the time */
#define REGION 1280     /* words of each worker's barrier-phase region */
#define MAX_WORKERS 64
#define MAX_REPORTS 8 /* wrong values each worker describes on stderr */

struct result {
    uint64_t locked_ops, words_checked, wrong, races, evictions;
    int rank;
    int pad;
};

struct shared {
    uint64_t *arrays[2]; /* [0] block-placed, [1] cyclic: lock k's words in arrays[k & 1] */
    uint64_t *regions;   /* REGION words per worker, cyclic */
    uint32_t *shadows;   /* per worker, LOCKS x (SLOTS-1): what it added, written at its end */
    struct result *results;
    agora_lock_t *locks;
    agora_thread_barrier_t barrier;
    uint64_t seed;
    int workers, locks_n, ops, phases, inject, kill_rank, kill_server, servers, nranks;
    double deadline;
};
struct worker_arg {
    struct shared *g;
    int w;
};

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint64_t region_value(uint64_t seed, int phase, int w, int i)
{
    uint64_t s = seed ^ ((uint64_t)phase << 48) ^ ((uint64_t)w << 32) ^ (uint64_t)i;
    return splitmix(&s) | 1;
}

/* Word j of lock k: groups of GROUP locks interleaved, starting half a page
 * into the array so that each group straddles two pages. */
static size_t lock_index(int k, int j)
{
    int half = k >> 1; /* index among the locks of its array */
    return PAGE_WORDS / 2 + (size_t)(half / GROUP) * GROUP * SLOTS + (size_t)j * GROUP + (size_t)(half % GROUP);
}
static size_t array_words(int locks) { return lock_index(locks - 1 - ((locks - 1) & 1), SLOTS - 1) + PAGE_WORDS; }
static volatile uint64_t *word(struct shared *g, int k, int j) { return &g->arrays[k & 1][lock_index(k, j)]; }

struct worker {
    struct shared *g;
    int w;
    uint64_t rng;
    uint32_t *shadow;
    struct result r;
    int reports;
    int op;
};

static void wrong(struct worker *me, const char *what, int k, int j, uint64_t got, const char *rel, uint64_t want)
{
    me->r.wrong++;
    if (me->reports++ < MAX_REPORTS)
        fprintf(stderr,
                "stress: WRONG worker %d (rank %d) op %d seed %llu: %s, lock %d slot %d: got %llu, expected %s%llu\n",
                me->w, agora_rank(), me->op, (unsigned long long)me->g->seed, what, k, j, (unsigned long long)got, rel,
                (unsigned long long)want);
}

/* Lock k's sum word against its counters, and each counter against what
 * this worker added to it. */
static void check_lock(struct worker *me, int k, const char *when)
{
    uint64_t sum = 0;
    for (int j = 0; j < SUM; j++) {
        uint64_t v = *word(me->g, k, j);
        if (v < me->shadow[(size_t)k * SUM + j])
            wrong(me, "counter below this worker's adds", k, j, v, ">= ", me->shadow[(size_t)k * SUM + j]);
        sum += v;
    }
    uint64_t s = *word(me->g, k, SUM);
    if (s != sum) wrong(me, when, k, SUM, s, "", sum);
    me->r.words_checked += SLOTS;
}

static void add(struct worker *me, int k, int racy)
{
    int m = 1 + (int)(splitmix(&me->rng) % 4);
    uint64_t total = 0;
    for (int i = 0; i < m; i++) {
        int j = (int)(splitmix(&me->rng) % SUM);
        uint64_t d = 1 + splitmix(&me->rng) % 3;
        volatile uint64_t *p = word(me->g, k, j);
        uint64_t v = *p;
        if (racy)
            for (volatile int spin = 0; spin < 2000; spin++) {
            }
        *p = v + d;
        me->shadow[(size_t)k * SUM + j] += (uint32_t)d;
        total += d;
    }
    volatile uint64_t *s = word(me->g, k, SUM);
    *s = *s + total;
}

static int pick_lock(struct worker *me)
{
    uint64_t r = splitmix(&me->rng);
    int n = me->g->locks_n;
    if (r & 1) { /* hot lock i: spread over the groups, both arrays */
        int i = (int)((r >> 1) % HOT);
        return i * (n / HOT) + (i & 1);
    }
    return (int)((r >> 1) % (uint64_t)n);
}

static void lock(struct worker *me, int k, int try_first)
{
    agora_lock_t *l = &me->g->locks[k];
    if (try_first) {
        int rc = agora_trylock(l);
        if (rc == AGORA_OK) return;
        CHECK(rc == AGORA_BUSY, "worker %d: agora_trylock(lock %d) = %d", me->w, k, rc);
    }
    int rc = agora_lock(l);
    CHECK(rc == AGORA_OK, "worker %d: agora_lock(lock %d) = %d", me->w, k, rc);
}
static void unlock(struct worker *me, int k)
{
    int rc = agora_unlock(&me->g->locks[k]);
    CHECK(rc == AGORA_OK, "worker %d: agora_unlock(lock %d) = %d", me->w, k, rc);
}

static void barrier(struct worker *me)
{
    int rc = agora_thread_barrier_wait(&me->g->barrier);
    CHECK(rc == AGORA_OK || rc == AGORA_BARRIER_SERIAL, "worker %d: thread barrier = %d", me->w, rc);
}

static void phase(struct worker *me, int p)
{
    struct shared *g = me->g;
    barrier(me);
    volatile uint64_t *mine = g->regions + (size_t)me->w * REGION;
    for (int i = 0; i < REGION; i++)
        mine[i] = region_value(g->seed, p, me->w, i);
    barrier(me);
    for (int o = 1; o < g->workers; o++) {
        int v = (me->w + o) % g->workers;
        volatile uint64_t *theirs = g->regions + (size_t)v * REGION;
        for (int i = 0; i < REGION; i++) {
            uint64_t got = theirs[i], want = region_value(g->seed, p, v, i);
            if (got != want) {
                me->r.wrong++;
                if (me->reports++ < MAX_REPORTS)
                    fprintf(stderr,
                            "stress: WRONG worker %d (rank %d) phase %d seed %llu: region of worker %d word %d: got "
                            "%llu, expected %llu\n",
                            me->w, agora_rank(), p, (unsigned long long)g->seed, v, i, (unsigned long long)got,
                            (unsigned long long)want);
            }
        }
        me->r.words_checked += REGION;
    }
    for (int k = me->w; k < g->locks_n; k += g->workers)
        check_lock(me, k, "sum after barrier");
    barrier(me);
}

static void faults(struct worker *me)
{
    struct shared *g = me->g;
    if (g->kill_rank >= 0 && me->w == g->kill_rank) {
        fprintf(stderr, "stress: worker %d kills its rank %d (SIGKILL) after %d operations\n", me->w, agora_rank(),
                me->op);
        raise(SIGKILL);
    }
    if (g->kill_server && me->w == 0) {
        int server = g->nranks + g->servers - 1;
        pid_t pid = pid_of_rank(server);
        CHECK(pid > 0, "cannot find memory server %d in /proc", server);
        fprintf(stderr, "stress: worker 0 kills memory server %d (pid %d) after %d operations\n", server, (int)pid,
                me->op);
        kill(pid, SIGKILL);
    }
}

static void *worker_main(void *arg)
{
    struct worker me = {0};
    me.g = ((struct worker_arg *)arg)->g;
    me.w = ((struct worker_arg *)arg)->w;
    struct shared *g = me.g;
    uint64_t s = g->seed * 1000003 + (uint64_t)me.w;
    me.rng = splitmix(&s);
    me.shadow = calloc((size_t)g->locks_n * SUM, sizeof(uint32_t));
    CHECK(me.shadow != NULL, "worker %d: shadow", me.w);
    me.r.rank = agora_rank();
    int next_phase = 1;
    for (me.op = 0; me.op < g->ops; me.op++) {
        if (g->phases > 0 && me.op == next_phase * g->ops / (g->phases + 1)) phase(&me, next_phase++);
        if (me.op == g->ops / 2) faults(&me);
        uint64_t r = splitmix(&me.rng) % 100;
        if (r < 55) { /* rmw */
            int k = pick_lock(&me);
            if (g->inject && r < 14) {
                add(&me, k, 1);
                me.r.races++;
                continue;
            }
            lock(&me, k, r % 5 == 0);
            check_lock(&me, k, "sum at acquire");
            add(&me, k, 0);
            unlock(&me, k);
        } else if (r < 85) { /* check */
            int k = pick_lock(&me);
            lock(&me, k, 0);
            check_lock(&me, k, "sum at acquire");
            unlock(&me, k);
        } else { /* nested */
            int a = pick_lock(&me), b = pick_lock(&me);
            if (a == b) b = (a + 1) % g->locks_n;
            int lo = a < b ? a : b, hi = a < b ? b : a;
            lock(&me, lo, 0);
            lock(&me, hi, 0);
            check_lock(&me, lo, "sum at nested acquire");
            check_lock(&me, hi, "sum at nested acquire");
            add(&me, lo, 0);
            add(&me, hi, 0);
            unlock(&me, hi);
            unlock(&me, lo);
        }
        me.r.locked_ops++;
        CHECK(agora_wtime() < g->deadline, "worker %d: op %d past the time bound", me.w, me.op);
    }
    agora_stats_t st;
    if (agora_stats_get(&st, AGORA_STATS_RANK) == AGORA_OK) me.r.evictions = st.cache_evictions;
    memcpy(g->shadows + (size_t)me.w * g->locks_n * SUM, me.shadow, sizeof(uint32_t) * (size_t)g->locks_n * SUM);
    g->results[me.w] = me.r;
    free(me.shadow);
    return NULL;
}

static long arg_long(int argc, char **argv, const char *name, long fallback)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) return strtol(argv[i + 1], NULL, 10);
    return fallback;
}
static int arg_flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], name)) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    CHECK(agora_init(&argc, &argv) == AGORA_OK, "init");
    int status = 0;
    if (agora_rank() == 0) {
        double t0 = agora_wtime();
        const int n = agora_nranks();
        const int workers = agora_thread_slots();
        CHECK(workers >= 1 && workers <= MAX_WORKERS, "needs 1..%d thread slots, has %d", MAX_WORKERS, workers);
        struct shared *g = test_malloc(sizeof *g);
        CHECK(g != NULL, "a global struct");
        memset(g, 0, sizeof *g);
        g->workers = workers;
        g->nranks = n;
        g->seed = (uint64_t)arg_long(argc, argv, "--seed", 1);
        g->ops = (int)arg_long(argc, argv, "--ops", 1000);
        g->phases = (int)arg_long(argc, argv, "--phases", 3);
        g->locks_n = (int)arg_long(argc, argv, "--locks", 512);
        g->inject = arg_flag(argc, argv, "--inject-races");
        g->kill_rank = (int)arg_long(argc, argv, "--kill-rank", -1);
        g->kill_server = arg_flag(argc, argv, "--kill-server");
        const char *sv = getenv("AGORA_MEMORY_SERVERS");
        g->servers = sv && *sv ? atoi(sv) : 0;
        g->deadline = agora_wtime() + (double)arg_long(argc, argv, "--time", 300);
        CHECK(g->locks_n >= 2 * HOT && g->locks_n % 2 == 0, "--locks %d: an even number, at least %d", g->locks_n,
              2 * HOT);
        CHECK(g->ops >= 1, "--ops %d", g->ops);
        CHECK(g->kill_rank < n, "--kill-rank %d: only %d ranks", g->kill_rank, n);
        CHECK(!g->kill_server || g->servers > 0, "--kill-server needs --memory-servers");
        size_t words = array_words(g->locks_n);
        g->arrays[0] = test_malloc_placed(words * 8, AGORA_PLACE_BLOCK, 0);
        g->arrays[1] = test_malloc_placed(words * 8, AGORA_PLACE_CYCLIC, 0);
        g->regions = test_malloc_placed((size_t)workers * REGION * 8, AGORA_PLACE_CYCLIC, 0);
        g->shadows = test_malloc((size_t)workers * g->locks_n * SUM * sizeof(uint32_t));
        g->results = test_malloc(sizeof(struct result) * (size_t)workers);
        g->locks = test_lock_array_create((size_t)g->locks_n);
        CHECK(g->arrays[0] && g->arrays[1] && g->regions && g->shadows && g->results && g->locks, "global arrays");
        CHECK(agora_thread_barrier_init(&g->barrier, (unsigned)workers) == AGORA_OK, "barrier");
        struct worker_arg *args = test_malloc(sizeof *args * (size_t)workers);
        CHECK(args != NULL, "global arguments");
        agora_thread_t t[MAX_WORKERS];
        for (int w = 0; w < workers; w++) {
            args[w].g = g;
            args[w].w = w;
            CHECK(agora_thread_create_on(&t[w], w % n, worker_main, &args[w]) == AGORA_OK, "create %d", w);
        }
        for (int w = 0; w < workers; w++)
            CHECK(agora_thread_join(t[w], NULL) == AGORA_OK, "join %d", w);
        struct result sum = {0};
        uint64_t evictions[MAX_WORKERS] = {0};
        for (int w = 0; w < workers; w++) {
            struct result r = g->results[w];
            sum.locked_ops += r.locked_ops;
            sum.words_checked += r.words_checked;
            sum.wrong += r.wrong;
            sum.races += r.races;
            if (r.rank >= 0 && r.rank < MAX_WORKERS && r.evictions > evictions[r.rank]) evictions[r.rank] = r.evictions;
        }
        for (int i = 0; i < n && i < MAX_WORKERS; i++)
            sum.evictions += evictions[i];
        /* Every counter is what all workers added; every sum their total
         * (the joins are acquires: rank 0 sees every worker's writes). */
        uint64_t final_wrong = 0;
        int reports = 0;
        const int final_locked = arg_flag(argc, argv, "--final-locked");
        for (int k = 0; k < g->locks_n; k++) {
            uint64_t total = 0;
            if (final_locked) CHECK(agora_lock(&g->locks[k]) == AGORA_OK, "final lock %d", k);
            for (int j = 0; j < SLOTS; j++) {
                uint64_t want = 0;
                if (j < SUM) {
                    for (int w = 0; w < workers; w++)
                        want += g->shadows[((size_t)w * g->locks_n + k) * SUM + j];
                    total += want;
                } else {
                    want = total;
                }
                uint64_t got = *word(g, k, j);
                if (got != want) {
                    final_wrong++;
                    if (reports++ < MAX_REPORTS)
                        fprintf(stderr,
                                "stress: WRONG at the end, seed %llu: lock %d slot %d%s: got %llu, expected %llu\n",
                                (unsigned long long)g->seed, k, j, j == SUM ? " (sum)" : "", (unsigned long long)got,
                                (unsigned long long)want);
                }
            }
            if (final_locked) CHECK(agora_unlock(&g->locks[k]) == AGORA_OK, "final unlock %d", k);
        }
        sum.words_checked += (uint64_t)g->locks_n * SLOTS;
        sum.wrong += final_wrong;
        printf("stress: %s, %d ranks x %d threads (%d workers), seed %llu, %d ops each%s%s: locked ops %llu, words "
               "checked %llu, wrong values %llu (%llu at the end); races injected %llu, cache evictions %llu, %.2f s\n",
               agora_protocol_name(), n, workers / n, workers, (unsigned long long)g->seed, g->ops,
               g->servers ? ", memory servers" : "", g->inject ? ", INJECTED RACES" : "",
               (unsigned long long)sum.locked_ops, (unsigned long long)sum.words_checked, (unsigned long long)sum.wrong,
               (unsigned long long)final_wrong, (unsigned long long)sum.races, (unsigned long long)sum.evictions,
               agora_wtime() - t0);
        fflush(stdout);
        status = sum.wrong > 0;
    }
    agora_finalize();
    return status;
}
