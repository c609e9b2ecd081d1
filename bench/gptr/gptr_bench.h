/* Helpers shared by the global-pointer benchmarks (bench/gptr): option
 * parsing, the scheme's configuration, counters summed over ranks, the
 * hashes of bench/programs/shm.h (so em3d builds the same graph as
 * bench_em3d), and the one JSON line every program prints.
 *
 * Every program prints human-readable lines on rank 0 and one line
 *   GPTR_RESULT {...}
 * (also appended to the file given with --json PATH). Exit status 0 when the
 * result verified, 1 when it did not, 2 for bad arguments. */
#ifndef BENCH_GPTR_H
#define BENCH_GPTR_H

#include <agora/agora.h>
#include <agora/gptr.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- failing ---------------------------------------------------------- */
static inline void gb_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: ", agora_rank());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    exit(3);
}

#define GB_CHECK(call)                                                                                                 \
    do {                                                                                                               \
        int gb_rc_ = (call);                                                                                           \
        if (gb_rc_ != AGORA_OK) gb_die("%s:%d: %s returned %d", __FILE__, __LINE__, #call, gb_rc_);                    \
    } while (0)

/* ---- options: --name VALUE or --name=VALUE ---------------------------- */
/* Returns the value of option `name` at argv[*i] (advancing *i past a
 * separate value), or NULL if argv[*i] is not that option. */
static inline const char *gb_opt(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n] != '\0') return NULL;
    if (*i + 1 >= argc) {
        if (agora_rank() == 0) fprintf(stderr, "missing value for %s\n", name);
        agora_finalize();
        exit(2);
    }
    return argv[++*i];
}

static inline long gb_long(const char *name, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 0);
    if (errno || *end || end == v || x < lo || x > hi) {
        if (agora_rank() == 0) fprintf(stderr, "bad value for %s: '%s' (allowed %ld..%ld)\n", name, v, lo, hi);
        agora_finalize();
        exit(2);
    }
    return x;
}

static inline double gb_double(const char *name, const char *v, double lo, double hi)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || end == v || !(x >= lo && x <= hi)) {
        if (agora_rank() == 0) fprintf(stderr, "bad value for %s: '%s' (allowed %g..%g)\n", name, v, lo, hi);
        agora_finalize();
        exit(2);
    }
    return x;
}

static inline void gb_usage_exit(const char *usage, int status)
{
    if (agora_rank() == 0) fputs(usage, status ? stderr : stdout);
    agora_finalize();
    exit(status);
}

/* ---- the scheme's configuration (what agorarun exported) -------------- */
struct gb_config {
    const char *scheme;
    long line, rank_bits, index_bits, block, dir_bits;
};

/* The options every program shares, tried after its own: --json PATH,
 * -h/--help, and anything else is a usage error. */
static inline void gb_common_option(int argc, char **argv, int *i, const char **json, const char *usage)
{
    const char *v;
    if ((v = gb_opt(argc, argv, i, "--json")))
        *json = v;
    else if (!strcmp(argv[*i], "-h") || !strcmp(argv[*i], "--help"))
        gb_usage_exit(usage, 0);
    else
        gb_usage_exit(usage, 2);
}

static inline long gb_env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 0) : dflt;
}

static inline struct gb_config gb_config(void)
{
    /* the defaults of src/common/options.def */
    struct gb_config c = {agora_gptr_scheme(),
                          gb_env_long("AGORA_GPTR_LINE", 64),
                          gb_env_long("AGORA_GPTR_RANK_BITS", 2),
                          gb_env_long("AGORA_GPTR_INDEX_BITS", 10),
                          gb_env_long("AGORA_GPTR_BLOCK", 64),
                          gb_env_long("AGORA_GPTR_DIR_BITS", 12)};
    return c;
}

/* The configuration as a JSON fragment: "scheme":..,"cache":{...} (only the
 * knobs the scheme uses). */
static inline void gb_config_json(char *buf, size_t size, const struct gb_config *c)
{
    if (!strcmp(c->scheme, "ordercache") || !strcmp(c->scheme, "ordernocache"))
        snprintf(buf, size,
                 "\"scheme\":\"%s\",\"cache\":{\"line_bytes\":%ld,\"rank_bits\":%ld,\"index_bits\":%ld,"
                 "\"lines\":%ld,\"cache_bytes\":%ld}",
                 c->scheme, c->line, c->rank_bits, c->index_bits, 1L << (c->rank_bits + c->index_bits),
                 !strcmp(c->scheme, "ordercache") ? (1L << (c->rank_bits + c->index_bits)) * c->line : 0L);
    else if (!strcmp(c->scheme, "swcc"))
        snprintf(buf, size, "\"scheme\":\"%s\",\"cache\":{\"block_bytes\":%ld,\"dir_bits\":%ld}", c->scheme, c->block,
                 c->dir_bits);
    else
        snprintf(buf, size, "\"scheme\":\"%s\",\"cache\":{}", c->scheme);
}

/* ---- counters, summed over ranks -------------------------------------- */
/* agora_gptr_stats_t as a vector of uint64_t, plus messages_sent and
 * bytes_sent of agora_stats (every message of the runtime, barriers too). */
#define GB_NGPTR (sizeof(agora_gptr_stats_t) / sizeof(uint64_t))
#define GB_NCOUNT (GB_NGPTR + 2)
struct gb_counts {
    uint64_t v[GB_NCOUNT];
};

static inline struct gb_counts gb_snapshot(void)
{
    struct gb_counts c;
    agora_gptr_stats_t g;
    agora_stats_t s;
    GB_CHECK(agora_gptr_stats(&g));
    GB_CHECK(agora_stats_get(&s, AGORA_STATS_RANK));
    memcpy(c.v, &g, sizeof g);
    c.v[GB_NGPTR] = s.messages_sent;
    c.v[GB_NGPTR + 1] = s.bytes_sent;
    return c;
}

/* The buffers of `total` timed iterations: a time per iteration (*t) and a
 * counter snapshot before each and after the last (*cs); the caller frees both. */
static inline void gb_timing_buffers(long total, double **t, struct gb_counts **cs)
{
    *t = malloc((size_t)total * sizeof **t);
    *cs = malloc((size_t)(total + 1) * sizeof **cs);
    if (!*t || !*cs) gb_die("out of memory");
}

/* (b - a) on this rank, summed over all ranks (collective). */
static inline struct gb_counts gb_delta_sum(const struct gb_counts *a, const struct gb_counts *b)
{
    int64_t buf[GB_NCOUNT];
    for (size_t i = 0; i < GB_NCOUNT; i++)
        buf[i] = (int64_t)(b->v[i] - a->v[i]);
    GB_CHECK(agora_reduce(buf, GB_NCOUNT, AGORA_INT64, AGORA_SUM));
    struct gb_counts d;
    for (size_t i = 0; i < GB_NCOUNT; i++)
        d.v[i] = (uint64_t)buf[i];
    /* peaks do not add: reorder_depth_max is the largest over ranks */
    agora_gptr_stats_t ga, gb;
    memcpy(&ga, a->v, sizeof ga);
    memcpy(&gb, b->v, sizeof gb);
    int64_t depth = (int64_t)gb.reorder_depth_max;
    GB_CHECK(agora_reduce(&depth, 1, AGORA_INT64, AGORA_MAX));
    agora_gptr_stats_t gd;
    memcpy(&gd, d.v, sizeof gd);
    gd.reorder_depth_max = (uint64_t)depth;
    memcpy(d.v, &gd, sizeof gd);
    return d;
}

static inline agora_gptr_stats_t gb_gptr(const struct gb_counts *c)
{
    agora_gptr_stats_t g;
    memcpy(&g, c->v, sizeof g);
    return g;
}

/* total += d, except the peak (reorder_depth_max), which is the larger. */
static inline void gb_accumulate(struct gb_counts *total, const struct gb_counts *d)
{
    agora_gptr_stats_t t = gb_gptr(total), x = gb_gptr(d);
    uint64_t depth = t.reorder_depth_max > x.reorder_depth_max ? t.reorder_depth_max : x.reorder_depth_max;
    for (size_t k = 0; k < GB_NCOUNT; k++)
        total->v[k] += d->v[k];
    t = gb_gptr(total);
    t.reorder_depth_max = depth;
    memcpy(total->v, &t, sizeof t);
}

static inline uint64_t gb_messages(const struct gb_counts *c) { return c->v[GB_NGPTR]; }
static inline uint64_t gb_bytes(const struct gb_counts *c) { return c->v[GB_NGPTR + 1]; }

/* The counters as a JSON object (into buf). */
static inline void gb_counts_json(char *buf, size_t size, const struct gb_counts *c)
{
    agora_gptr_stats_t g = gb_gptr(c);
    snprintf(buf, size,
             "{\"reads\":%" PRIu64 ",\"writes\":%" PRIu64 ",\"stores\":%" PRIu64 ",\"local\":%" PRIu64
             ",\"hits\":%" PRIu64 ",\"misses\":%" PRIu64 ",\"stalls\":%" PRIu64 ",\"write_backs\":%" PRIu64
             ",\"requests\":%" PRIu64 ",\"bytes_fetched\":%" PRIu64 ",\"bytes_written\":%" PRIu64 ",\"nacks\":%" PRIu64
             ",\"invalidations\":%" PRIu64 ",\"recalls\":%" PRIu64 ",\"out_of_order\":%" PRIu64
             ",\"reorder_depth_max\":%" PRIu64 ",\"messages_sent\":%" PRIu64 ",\"bytes_sent\":%" PRIu64 "}",
             g.reads, g.writes, g.stores, g.local, g.hits, g.misses, g.stalls, g.write_backs, g.requests,
             g.bytes_fetched, g.bytes_written, g.nacks, g.invalidations, g.recalls, g.out_of_order, g.reorder_depth_max,
             gb_messages(c), gb_bytes(c));
}

static inline double gb_hit_rate(const struct gb_counts *c)
{
    agora_gptr_stats_t g = gb_gptr(c);
    return g.hits + g.misses ? (double)g.hits / (double)(g.hits + g.misses) : 0.0;
}

/* ---- results ---------------------------------------------------------- */
/* Rank 0 prints "GPTR_RESULT <json>" and appends <json> to `path` if set. */
static inline void gb_emit(const char *path, const char *json)
{
    if (agora_rank() != 0) return;
    printf("GPTR_RESULT %s\n", json);
    fflush(stdout);
    if (path && *path) {
        FILE *f = fopen(path, "a");
        if (!f) gb_die("cannot open %s: %s", path, strerror(errno));
        fprintf(f, "%s\n", json);
        fclose(f);
    }
}

static int gb_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double gb_median(const double *v, int n)
{
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) gb_die("out of memory");
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, gb_cmp_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

/* "[a,b,c]" of doubles */
static inline void gb_array_json(char *buf, size_t size, const double *v, int n, const char *fmt)
{
    size_t at = 0;
    at += (size_t)snprintf(buf + at, size - at, "[");
    for (int i = 0; i < n && at < size; i++) {
        at += (size_t)snprintf(buf + at, size - at, i ? "," : "");
        if (at < size) at += (size_t)snprintf(buf + at, size - at, fmt, v[i]);
    }
    if (at < size) snprintf(buf + at, size - at, "]");
}

/* The largest of every rank's value (collective). */
static inline double gb_max(double x)
{
    GB_CHECK(agora_reduce(&x, 1, AGORA_DOUBLE, AGORA_MAX));
    return x;
}

/* Every t[i] becomes the largest of the ranks' t[i], in one reduction
 * (collective). */
static inline void gb_max_each(double *t, long n) { GB_CHECK(agora_reduce(t, (size_t)n, AGORA_DOUBLE, AGORA_MAX)); }

/* The mean of t[1..total-1]: the timed iterations after the first (cold) one. */
static inline double gb_timed_mean(const double *t, long total)
{
    double mean = 0;
    for (long it = 1; it < total; it++)
        mean += t[it] / (double)(total - 1);
    return mean;
}

/* True on every rank if `ok` is true on every rank (collective). */
static inline int gb_all(int ok)
{
    int64_t v = ok;
    GB_CHECK(agora_reduce(&v, 1, AGORA_INT64, AGORA_MIN));
    return (int)v;
}

/* ---- randomness and hashes -------------------------------------------- */
/* bench/programs/shm.h's shm_mix64 and shm_u01, bit for bit. */
static inline uint64_t gb_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
static inline double gb_u01(uint64_t h) { return (double)(h >> 11) * (1.0 / 9007199254740992.0); }

/* splitmix64 stream */
struct gb_rng {
    uint64_t s;
};
static inline uint64_t gb_next(struct gb_rng *r)
{
    r->s += 0x9e3779b97f4a7c15ULL;
    uint64_t z = r->s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* uniform in [0, n) */
static inline uint64_t gb_below(struct gb_rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)gb_next(r) * n) >> 64);
}

/* ---- spread arrays ---------------------------------------------------- */
/* A collective allocation that must succeed. */
static inline agora_gptr_t gb_alloc(size_t bytes_per_rank, const char *what)
{
    agora_gptr_t g = AGORA_GPTR_NULL;
    agora_status_t status = agora_gptr_mem_alloc(bytes_per_rank, &g);
    if (status != AGORA_OK)
        gb_die("agora_gptr_mem_alloc(%zu) for %s failed: %s (raise AGORA_GPTR_SEGMENT)", bytes_per_rank, what,
               agora_strerror(status));
    return g;
}

#endif /* BENCH_GPTR_H */
