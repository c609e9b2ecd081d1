/* Memory servers (docs/memory-servers.md), run with agorarun -n N
 * --memory-servers M [--stripe S]:
 *
 *   servers layout   agora_nranks() is N-M; every page of a collective
 *                    (block and cyclic), agora_malloc'd and placed allocation
 *                    is homed on a server, striped S bytes at a time; placement
 *                    on a rank is refused; thread placement counts compute
 *                    ranks only; values written by every rank read back right
 *   servers idle S   after traffic, the compute ranks sleep S seconds: each
 *                    server (found in /proc by its MPI rank) must use under
 *                    2% of a core meanwhile
 *   servers wake     rank 0 faults on pages of a sleeping server, 20 times
 *                    after a 20 ms pause each: the median fault must take
 *                    under 50 ms (a server is rung awake, not found by its
 *                    2-a-second hang-watch report)
 *   servers kill     rank 0 kills the last server with SIGKILL, then touches
 *                    memory it homes: the job must end, naming the rank
 *   servers stop     rank 0 stops the last server (SIGSTOP), then touches
 *                    memory it homes: the hang watch must name the server
 *                    (run with --hang-warn and --hang-timeout) */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rank_pid.h"

#define PAGE 4096

static int env_int(const char *name, int fallback)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : fallback;
}

static int world_size(void) { return env_int("OMPI_COMM_WORLD_SIZE", env_int("PMI_SIZE", -1)); }
static int servers(void) { return env_int("AGORA_MEMORY_SERVERS", 0); }

static long stripe_bytes(void)
{
    const char *s = getenv("AGORA_STRIPE");
    if (!s || !*s) return PAGE;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    return v;
}

/* Every page of [p, p+bytes) homed on a server, one stripe after another. */
static void check_striped(const char *what, char *p, size_t bytes)
{
    int c = agora_nranks(), m = servers();
    long stripe = stripe_bytes();
    int prev = -1;
    for (size_t off = 0; off < bytes; off += PAGE) {
        int h = agora_home_of(p + off);
        CHECK(h >= c && h < c + m, "%s: page %zu homed on %d, not on a server (%d..%d)", what, off / PAGE, h, c,
              c + m - 1);
        uintptr_t addr = (uintptr_t)(p + off);
        if (prev >= 0) {
            /* The same server within a stripe, the next one across a stripe boundary. */
            int expect = addr % stripe == 0 ? c + (prev - c + 1) % m : prev;
            CHECK(h == expect, "%s: page %zu homed on %d, expected %d (stripe %ld bytes)", what, off / PAGE, h, expect,
                  stripe);
        }
        prev = h;
    }
}

static void *where_am_i(void *arg)
{
    (void)arg;
    return (void *)(long)agora_rank();
}

static void layout(void)
{
    int me = agora_rank(), c = agora_nranks(), n = world_size(), m = servers();
    CHECK(m > 0, "run with --memory-servers M");
    CHECK(n < 0 || c == n - m, "agora_nranks() is %d; %d processes less %d servers is %d", c, n, m, n - m);
    CHECK(me >= 0 && me < c, "agora_rank() %d outside 0..%d", me, c - 1);

    size_t pages = 64;
    char *blk = test_alloc(pages * PAGE);
    char *cyc = test_alloc_placed(pages * PAGE, AGORA_PLACE_CYCLIC, 0);
    CHECK(blk && cyc, "collective allocations");
    check_striped("block allocation", blk, pages * PAGE);
    check_striped("cyclic allocation", cyc, pages * PAGE);
    CHECK(test_alloc_placed(PAGE, AGORA_PLACE_RANK, 0) == NULL, "placement on a rank must be refused");
    char *mine = test_malloc(8 * PAGE);
    CHECK(mine != NULL, "agora_malloc");
    check_striped("agora_malloc", (char *)(((uintptr_t)mine + PAGE - 1) & ~(uintptr_t)(PAGE - 1)), 6 * PAGE);
    char *placed = test_malloc_placed(16 * PAGE, AGORA_PLACE_BLOCK, 0);
    CHECK(placed != NULL, "agora_malloc_placed");
    check_striped("agora_malloc_placed", placed, 16 * PAGE);
    CHECK(test_malloc_placed(PAGE, AGORA_PLACE_RANK, 0) == NULL, "placed allocation on a rank must be refused");

    /* Values through the servers: each rank writes its share of both
     * allocations, everyone reads everything back after a barrier. */
    long words = (long)(pages * PAGE / sizeof(long));
    long *b = (long *)blk, *y = (long *)cyc;
    for (long i = me; i < words; i += c) {
        b[i] = i * 3 + 1;
        y[i] = -i;
    }
    agora_barrier();
    for (long i = 0; i < words; i++) {
        CHECK(b[i] == i * 3 + 1, "blk[%ld] = %ld", i, b[i]);
        CHECK(y[i] == -i, "cyc[%ld] = %ld", i, y[i]);
    }
    agora_barrier();

    /* A freed placed run is reused zeroed (the servers forget it too). */
    memset(placed, 0x5a, 16 * PAGE);
    agora_barrier();
    if (me == 0) CHECK(agora_mem_free(placed) == 0, "agora_free of the placed run");
    agora_barrier();
    char *again = test_malloc_placed(16 * PAGE, AGORA_PLACE_BLOCK, 0);
    CHECK(again != NULL, "agora_malloc_placed again");
    for (int i = 0; i < 16 * PAGE; i++)
        CHECK(again[i] == 0, "reused placed byte %d is %d, not 0", i, again[i]);
    agora_barrier();

    /* Thread placement counts compute ranks only. */
    if (me == 0) {
        agora_thread_t t[8];
        int k = c < 8 ? c : 8; /* the placement rule allows c x threads-per-rank at once */
        for (int i = 0; i < k; i++)
            CHECK(agora_thread_create(&t[i], where_am_i, NULL) == AGORA_OK, "create %d", i);
        for (int i = 0; i < k; i++) {
            void *ret;
            CHECK(t[i].rank >= 0 && t[i].rank < c, "thread %d placed on rank %d", i, t[i].rank);
            CHECK(agora_thread_join(t[i], &ret) == AGORA_OK, "join %d", i);
            CHECK((long)ret == t[i].rank, "thread %d ran on %ld, placed on %d", i, (long)ret, t[i].rank);
        }
        CHECK(agora_thread_create_on(&t[0], c, where_am_i, NULL) != AGORA_OK, "a thread on server rank %d", c);
    }
    agora_barrier();
    PASS("servers layout");
}

static double cpu_seconds(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *p = strrchr(buf, ')'); /* after the command name, which may hold spaces */
    unsigned long utime = 0, stime = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return -1;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static void idle(int seconds)
{
    int me = agora_rank(), c = agora_nranks(), m = servers();
    CHECK(m > 0, "run with --memory-servers M");
    size_t bytes = 256 * PAGE;
    char *mem = test_alloc(bytes);
    for (size_t i = (size_t)me * PAGE; i < bytes; i += (size_t)c * PAGE)
        mem[i] = 1; /* traffic first */
    agora_barrier();
    if (me == 0) {
        double before[64], after[64];
        pid_t pids[64];
        for (int s = 0; s < m && s < 64; s++) {
            pids[s] = pid_of_rank(c + s);
            CHECK(pids[s] > 0, "cannot find memory server %d in /proc", c + s);
            before[s] = cpu_seconds(pids[s]);
        }
        double t0 = agora_wtime();
        sleep((unsigned)seconds);
        double wall = agora_wtime() - t0;
        for (int s = 0; s < m && s < 64; s++) {
            after[s] = cpu_seconds(pids[s]);
            double used = after[s] - before[s];
            printf("memory server %d (pid %d): %.3f s of CPU in %.2f s idle (%.2f%%)\n", c + s, (int)pids[s], used,
                   wall, 100 * used / wall);
            CHECK(before[s] >= 0 && after[s] >= 0, "cannot read /proc/%d/stat", (int)pids[s]);
            CHECK(used < 0.02 * wall, "memory server %d used %.3f s of CPU in %.2f s idle", c + s, used, wall);
        }
    } else {
        sleep((unsigned)seconds);
    }
    agora_barrier();
    for (size_t i = 0; i < bytes; i += PAGE)
        CHECK(mem[i] == 1, "page %zu lost its write", i / PAGE);
    agora_barrier();
    PASS("servers idle");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void wake(void)
{
    int me = agora_rank(), m = servers();
    CHECK(m > 0, "run with --memory-servers M");
    enum { N = 20 };
    char *mem = test_alloc(N * PAGE);
    agora_barrier();
    if (me == 0) {
        double t[N];
        for (int i = 0; i < N; i++) {
            usleep(20000);
            double t0 = agora_wtime();
            /* A page never read here, out of order (no prefetch run): fetched from its server. */
            t[i] = mem[(size_t)((i * 7) % N) * PAGE];
            t[i] = agora_wtime() - t0;
        }
        qsort(t, N, sizeof t[0], cmp_double);
        printf("fault from a sleeping server: median %.3f ms, max %.3f ms\n", 1e3 * t[N / 2], 1e3 * t[N - 1]);
        CHECK(t[N / 2] < 0.05, "median fault %.3f ms: the server was not rung awake", 1e3 * t[N / 2]);
    }
    agora_barrier();
    PASS("servers wake");
}

static void kill_server(int sig)
{
    int me = agora_rank(), c = agora_nranks(), m = servers();
    CHECK(m > 0, "run with --memory-servers M");
    char *mem = test_alloc(64 * PAGE);
    agora_barrier();
    if (me == 0) {
        pid_t pid = pid_of_rank(c + m - 1);
        CHECK(pid > 0, "cannot find memory server %d in /proc", c + m - 1);
        fprintf(stderr, "sending signal %d to memory server %d (pid %d)\n", sig, c + m - 1, (int)pid);
        kill(pid, sig);
        sleep(1);
        for (int i = 0; i < 64; i++)
            mem[i * PAGE] = 1; /* some of these are homed on it */
    }
    agora_barrier();
    CHECK(0, "the job went on without its memory server");
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "layout";
    if (!strcmp(mode, "layout"))
        layout();
    else if (!strcmp(mode, "idle"))
        idle(argc > 2 ? atoi(argv[2]) : 3);
    else if (!strcmp(mode, "wake"))
        wake();
    else if (!strcmp(mode, "kill"))
        kill_server(SIGKILL);
    else if (!strcmp(mode, "stop"))
        kill_server(SIGSTOP);
    else
        CHECK(0, "unknown mode %s", mode);
    agora_finalize();
    return 0;
}
