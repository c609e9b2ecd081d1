/* tsp -- branch-and-bound travelling salesman (TreadMarks TSP, Iosevich & Schuster).
 *
 * n cities at random points of a 1000 x 1000 square, rounded Euclidean
 * distances. Worker 0 expands every tour prefix of `depth` cities after city 0
 * into a shared work queue (sorted by lower bound, most promising first) and
 * seeds the shared best tour with a nearest-neighbour tour. Then every worker
 * repeatedly takes the next prefix from the queue (under the queue lock) and
 * completes it by depth-first search, pruning with
 *     cost so far + sum over the cities still to leave of their cheapest edge
 * against the shared best bound, which it reads without a lock (a stale bound
 * only prunes less) and improves under the bound lock. The distance matrix is
 * shared, written once by worker 0 and then only read.
 *
 * Usage: bench_tsp [-n CITIES] [-d DEPTH] [-s SEED] [-p P]
 *   defaults 18 cities, prefix depth 3, seed 1.
 * Figure: seconds to the proven optimum (the whole search is timed; there is
 * no warm-up for a one-shot search).
 * Validation (worker 0): the best tour must be a permutation of the cities
 * whose length equals the reported cost, and, for n <= 20, the cost must equal
 * the optimum computed serially by Held-Karp dynamic programming (an exact,
 * independent algorithm). */
#include "shm.h"

#define TSP_MAXN 32
#define TSP_MAXDEPTH 6

struct config {
    int n, depth;
    uint64_t seed;
};

/* One queued tour prefix: city 0 then depth cities. */
struct job {
    int64_t lb;
    uint8_t city[8];
};

struct queue {
    int64_t next; /* index of the next job to hand out */
};

struct best {
    int64_t cost;
    int32_t path[TSP_MAXN];
};

/* Per-worker search state (private memory). */
struct search {
    int n;
    const int32_t *dist;           /* shared, read-only after set-up */
    int minedge[TSP_MAXN];         /* cheapest edge out of each city */
    int order[TSP_MAXN][TSP_MAXN]; /* neighbours of each city, nearest first */
    struct best *best;             /* shared */
    shm_lock_t *best_lock;
    int path[TSP_MAXN];
    int64_t nodes;
};

static int64_t read_bound(const struct best *b) { return __atomic_load_n(&b->cost, __ATOMIC_RELAXED); }

static void offer_tour(struct search *s, int64_t cost)
{
    if (cost >= read_bound(s->best)) return;
    SHM_LOCK(s->best_lock);
    if (cost < s->best->cost) { /* re-check under the lock */
        for (int i = 0; i < s->n; i++)
            s->best->path[i] = s->path[i];
        __atomic_store_n(&s->best->cost, cost, __ATOMIC_RELAXED);
    }
    SHM_UNLOCK(s->best_lock);
}

/* Depth-first completion of s->path[0..depth); `rest` is the sum of minedge
 * over the unvisited cities. */
static void dfs(struct search *s, int depth, int64_t cost, uint32_t visited, int64_t rest)
{
    const int n = s->n, cur = s->path[depth - 1];
    s->nodes++;
    if (depth == n) {
        offer_tour(s, cost + s->dist[cur * n + 0]);
        return;
    }
    if (cost + s->minedge[cur] + rest >= read_bound(s->best)) return; /* cannot beat the best tour known anywhere */
    for (int k = 0; k < n - 1; k++) {
        int next = s->order[cur][k];
        if (visited & (1u << next)) continue;
        s->path[depth] = next;
        dfs(s, depth + 1, cost + s->dist[cur * n + next], visited | (1u << next), rest - s->minedge[next]);
    }
}

static void make_search(struct search *s, int n, const int32_t *dist, struct best *best, shm_lock_t *lock)
{
    s->n = n;
    s->dist = dist;
    s->best = best;
    s->best_lock = lock;
    s->nodes = 0;
    for (int i = 0; i < n; i++) {
        int m = INT32_MAX, cnt = 0;
        for (int j = 0; j < n; j++)
            if (j != i) {
                if (dist[i * n + j] < m) m = dist[i * n + j];
                s->order[i][cnt++] = j;
            }
        s->minedge[i] = m;
        /* insertion sort of the neighbours by distance (n is small) */
        for (int a = 1; a < cnt; a++) {
            int c = s->order[i][a], b = a;
            while (b > 0 && dist[i * n + s->order[i][b - 1]] > dist[i * n + c]) {
                s->order[i][b] = s->order[i][b - 1];
                b--;
            }
            s->order[i][b] = c;
        }
    }
}

static int64_t njobs_for(int n, int depth)
{
    int64_t j = 1;
    for (int k = 0; k < depth; k++)
        j *= (n - 1 - k);
    return j;
}

static int cmp_job(const void *a, const void *b)
{
    const struct job *x = a, *y = b;
    if (x->lb != y->lb) return x->lb < y->lb ? -1 : 1;
    return memcmp(x->city, y->city, sizeof x->city);
}

/* Worker 0: enumerate all prefixes 0, c1..c_depth into jobs[], best first. */
static void make_jobs(const struct search *s, int depth, struct job *jobs, int64_t njobs)
{
    const int n = s->n;
    struct job *tmp = malloc((size_t)njobs * sizeof *tmp);
    if (!tmp) shm_die("tsp: out of memory for jobs");
    int64_t cnt = 0, total_min = 0;
    for (int c = 0; c < n; c++)
        total_min += s->minedge[c];
    int pre[TSP_MAXDEPTH + 1];
    pre[0] = 0;
    /* odometer over ordered selections of distinct cities 1..n-1 */
    int idx[TSP_MAXDEPTH] = {0};
    for (;;) {
        uint32_t used = 1u;
        int ok = 1;
        for (int k = 0; k < depth && ok; k++) {
            int c = idx[k] + 1;
            if (used & (1u << c)) ok = 0;
            used |= 1u << c;
            pre[k + 1] = c;
        }
        if (ok) {
            int64_t cost = 0, rest = total_min - s->minedge[0];
            for (int k = 0; k < depth; k++) {
                cost += s->dist[pre[k] * n + pre[k + 1]];
                rest -= s->minedge[pre[k + 1]];
            }
            struct job *j = &tmp[cnt++];
            memset(j, 0, sizeof *j);
            j->lb = cost + s->minedge[pre[depth]] + rest;
            for (int k = 0; k <= depth; k++)
                j->city[k] = (uint8_t)pre[k];
        }
        int k = depth - 1;
        while (k >= 0 && ++idx[k] == n - 1)
            idx[k--] = 0;
        if (k < 0) break;
    }
    if (cnt != njobs) shm_die("tsp: internal error: %lld jobs, expected %lld", (long long)cnt, (long long)njobs);
    qsort(tmp, (size_t)njobs, sizeof *tmp, cmp_job);
    memcpy(jobs, tmp, (size_t)njobs * sizeof *tmp);
    free(tmp);
}

/* Exact optimum by Held-Karp dynamic programming, O(n^2 2^n), n <= 20. */
static int64_t held_karp(int n, const int32_t *d)
{
    if (n == 1) return 0;
    int m = n - 1; /* cities 1..n-1 are bits 0..m-1 */
    size_t states = (size_t)1 << m;
    int32_t *dp = malloc(states * (size_t)m * sizeof *dp);
    if (!dp) shm_die("tsp: out of memory for Held-Karp");
    for (size_t i = 0; i < states * (size_t)m; i++)
        dp[i] = INT32_MAX;
    for (int j = 0; j < m; j++)
        dp[((size_t)1 << j) * (size_t)m + (size_t)j] = d[0 * n + (j + 1)];
    for (size_t mask = 1; mask < states; mask++)
        for (int j = 0; j < m; j++) {
            int32_t v = dp[mask * (size_t)m + (size_t)j];
            if (v == INT32_MAX || !(mask & ((size_t)1 << j))) continue;
            for (int k = 0; k < m; k++) {
                if (mask & ((size_t)1 << k)) continue;
                size_t nm = mask | ((size_t)1 << k);
                int32_t c = v + d[(j + 1) * n + (k + 1)];
                if (c < dp[nm * (size_t)m + (size_t)k]) dp[nm * (size_t)m + (size_t)k] = c;
            }
        }
    int64_t best = INT64_MAX;
    for (int j = 0; j < m; j++) {
        int64_t c = (int64_t)dp[(states - 1) * (size_t)m + (size_t)j] + d[(j + 1) * n + 0];
        if (c < best) best = c;
    }
    free(dp);
    return best;
}

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID();
    const int n = cfg->n, depth = cfg->depth;
    const int64_t njobs = njobs_for(n, depth);

    /* separate allocations: the read-mostly distance matrix and bound do not
     * share pages with the frequently written queue head */
    int32_t *dist = shm_alloc_or_die((size_t)n * (size_t)n * sizeof(int32_t), "distances");
    struct job *jobs = shm_alloc_or_die((size_t)njobs * sizeof(struct job), "job queue");
    struct queue *q = shm_alloc_or_die(sizeof(struct queue), "queue head");
    struct best *best = shm_alloc_or_die(sizeof(struct best), "best tour");
    SHM_LOCK_DECL(qlock) = SHM_LOCK_CREATE();
    SHM_LOCK_DECL(block) = SHM_LOCK_CREATE();

    if (id == 0) {
        double x[TSP_MAXN], y[TSP_MAXN];
        for (int i = 0; i < n; i++) {
            x[i] = 1000.0 * shm_u01(shm_mix64(cfg->seed * 1000003ULL + 2 * (uint64_t)i));
            y[i] = 1000.0 * shm_u01(shm_mix64(cfg->seed * 1000003ULL + 2 * (uint64_t)i + 1));
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                dist[i * n + j] = (int32_t)lround(hypot(x[i] - x[j], y[i] - y[j]));
    }
    SHM_BARRIER();

    struct search *s = malloc(sizeof *s);
    if (!s) shm_die("tsp: out of memory");
    make_search(s, n, dist, best, block);

    if (id == 0) {
        make_jobs(s, depth, jobs, njobs);
        q->next = 0;
        /* initial bound: nearest-neighbour tour */
        uint32_t vis = 1u;
        int cur = 0;
        int64_t cost = 0;
        best->path[0] = 0;
        for (int k = 1; k < n; k++) {
            int nx = -1;
            for (int c = 0; c < n - 1 && nx < 0; c++)
                if (!(vis & (1u << s->order[cur][c]))) nx = s->order[cur][c];
            vis |= 1u << nx;
            cost += dist[cur * n + nx];
            best->path[k] = nx;
            cur = nx;
        }
        best->cost = cost + dist[cur * n + 0];
    }

    shm_kernel_begin();
    for (;;) {
        SHM_LOCK(qlock);
        int64_t j = q->next;
        if (j < njobs) q->next = j + 1;
        SHM_UNLOCK(qlock);
        if (j >= njobs) break;
        const struct job *jb = &jobs[j];
        if (jb->lb >= read_bound(best)) continue; /* the whole subtree is pruned */
        uint32_t vis = 0;
        int64_t cost = 0, rest = 0;
        for (int k = 0; k <= depth; k++) {
            s->path[k] = jb->city[k];
            vis |= 1u << jb->city[k];
            if (k) cost += dist[jb->city[k - 1] * n + jb->city[k]];
        }
        for (int c = 0; c < n; c++)
            if (!(vis & (1u << c))) rest += s->minedge[c];
        dfs(s, depth + 1, cost, vis, rest);
    }
    double t = shm_kernel_end();

    int64_t nodes = s->nodes;
    SHM_REDUCE_SUM_INT64(&nodes, 1);

    int valid = 1;
    if (id == 0) {
        /* the tour must be a permutation whose length is the reported cost */
        uint32_t seen = 0;
        int64_t len = 0;
        for (int k = 0; k < n; k++) {
            int c = best->path[k];
            if (c < 0 || c >= n || (seen & (1u << c))) {
                fprintf(stderr, "VALIDATION FAILED: tsp: tour is not a permutation (city %d at %d)\n", c, k);
                valid = 0;
                break;
            }
            seen |= 1u << c;
            len += dist[c * n + best->path[(k + 1) % n]];
        }
        if (valid && len != best->cost) {
            fprintf(stderr, "VALIDATION FAILED: tsp: tour length %lld != reported cost %lld\n", (long long)len,
                    (long long)best->cost);
            valid = 0;
        }
        if (valid && n <= 20) {
            int64_t opt = held_karp(n, dist);
            if (opt != best->cost) {
                fprintf(stderr, "VALIDATION FAILED: tsp: cost %lld, Held-Karp optimum %lld\n", (long long)best->cost,
                        (long long)opt);
                valid = 0;
            }
        } else if (valid)
            fprintf(stderr, "tsp: n > 20, optimality not checked (tour consistency only)\n");
        printf("tsp: n=%d depth=%d jobs=%lld workers=%d cost=%lld nodes=%lld time=%.4f s\n", n, depth, (long long)njobs,
               SHM_NPROCS(), (long long)best->cost, (long long)nodes, t);
    }
    free(s);
    char size[64], extra[128];
    snprintf(size, sizeof size, "n=%d", n);
    snprintf(extra, sizeof extra, "\"cost\":%lld,\"nodes\":%lld", (long long)best->cost, (long long)nodes);
    return shm_report("tsp", "default", size, t, "s", t, 1, valid, extra);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.n = 18, .depth = 3, .seed = 1};
    const struct shm_option opts[] = {
        {"cities", "n", SHM_OPT_INT, &cfg.n, "N", "cities", SHM_RANGE(2, TSP_MAXN)},
        {"depth", "d", SHM_OPT_INT, &cfg.depth, "D", "cities of the queued tour prefixes; at most N-1 are used",
         SHM_RANGE(1, TSP_MAXDEPTH)},
        {"seed", "s", SHM_OPT_U64, &cfg.seed, "S", "seed of the city positions", SHM_ANY_VALUE},
        SHM_OPTIONS_END};
    int rc =
        shm_parse_options(argc, argv, opts, "Branch-and-bound travelling salesman (TreadMarks, Iosevich & Schuster).");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    if (cfg.depth > cfg.n - 1) cfg.depth = cfg.n - 1;
    return shm_run_and_finish(worker, &cfg);
}
