/* nbody / nbodyw -- the n-body kernel microbenchmarks of Iosevich & Schuster.
 *
 * A large set of 64-byte bodies; every iteration has the phases
 *   1. every worker reads the entire set of bodies (here: computes the centre
 *      of mass, summing in index order so every worker gets the same bits);
 *   2. every worker processes and updates its 1/P of the bodies; processing
 *      is simulated by a constant-length busy loop per body (as in Iosevich & Schuster),
 *      followed by a small, deterministic move towards the centre of mass;
 *   3. (nbodyw only) a sequential phase: worker 0 alone updates all bodies
 *      (here: re-centres every position on the new centre of mass).
 * Barriers separate the phases. nbody is nbodyw without phase 3 (Iosevich & Schuster:
 * "one coarse phase and one fine phase").
 *
 * This file is bench_nbody; nbodyw.c defines NBODY_SEQUENTIAL_PHASE and
 * includes it.
 *
 * Usage: bench_nbody[w] [-n BODIES] [-i ITERATIONS] [-w BUSY] [-p P]
 *   defaults 32768 bodies (2 MiB, Iosevich & Schuster's size), 20 timed iterations
 *   after one untimed warm-up iteration, busy loop of 400 steps per body.
 * Figure: ms per iteration.
 * Validation (worker 0): a serial replay in private memory; all body fields
 * must agree to 1e-12 relative (the same operations in the same order, so
 * they should agree exactly). */
#include "shm.h"

#ifndef NBODY_SEQUENTIAL_PHASE
#define NBODY_SEQUENTIAL_PHASE 0
#define NBODY_NAME "nbody"
#else
#define NBODY_NAME "nbodyw"
#endif

/* 64 bytes: 64 bodies per page, none straddles a page. */
struct body {
    double pos[3];
    double vel[3];
    double mass;
    double work; /* result of the simulated processing */
};
_Static_assert(sizeof(struct body) == 64, "bodies must be 64 bytes");

struct config {
    size_t n;
    long iters;
    long busy;
};

static const double dt = 1e-3, pull = 1e-2;

static void init_body(size_t i, struct body *b)
{
    for (int k = 0; k < 3; k++) {
        b->pos[k] = shm_u01(shm_mix64(3 * i + (uint64_t)k)) * 100.0;
        b->vel[k] = shm_u01(shm_mix64(0xbeef000000ULL + 3 * i + (uint64_t)k)) - 0.5;
    }
    b->mass = 1.0 + shm_u01(shm_mix64(0xa55a000000ULL + i));
    b->work = 0.0;
}

/* Phase 1: centre of mass of all n bodies (reads every body). */
static void centre_of_mass(const struct body *b, size_t n, double com[3])
{
    double m = 0.0, s[3] = {0.0, 0.0, 0.0};
    for (size_t i = 0; i < n; i++) {
        m += b[i].mass;
        for (int k = 0; k < 3; k++)
            s[k] += b[i].mass * b[i].pos[k];
    }
    for (int k = 0; k < 3; k++)
        com[k] = s[k] / m;
}

/* Phase 2 for bodies [lo, hi): constant-length busy loop, then move. */
static void process(struct body *b, size_t lo, size_t hi, long busy, const double com[3])
{
    for (size_t i = lo; i < hi; i++) {
        double w = b[i].work + b[i].mass;
        for (long k = 0; k < busy; k++) /* a dependency chain the compiler must keep */
            w = w * 0.9999999 + 1e-7;
        b[i].work = w;
        for (int k = 0; k < 3; k++) {
            b[i].vel[k] += dt * pull * (com[k] - b[i].pos[k]);
            b[i].pos[k] += dt * b[i].vel[k];
        }
    }
}

/* Phase 3 (nbodyw): one worker re-centres all bodies. */
static void sequential_phase(struct body *b, size_t n)
{
    double com[3];
    centre_of_mass(b, n, com);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            b[i].pos[k] -= com[k] - 50.0;
}

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID();
    const size_t n = cfg->n;

    struct body *bodies = shm_alloc_or_die(n * sizeof(struct body), "bodies");
    size_t lo, hi;
    shm_owned_range(bodies, n, sizeof(struct body), id, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        init_body(i, &bodies[i]);
    SHM_BARRIER();

    long total = cfg->iters + 1;
    for (long it = 0; it < total; it++) {
        if (it == 1) shm_kernel_begin();
        double com[3];
        centre_of_mass(bodies, n, com);          /* phase 1: all read all */
        SHM_BARRIER();                           /* nobody writes before everybody has read */
        process(bodies, lo, hi, cfg->busy, com); /* phase 2: own 1/P */
        SHM_BARRIER();
        if (NBODY_SEQUENTIAL_PHASE) {
            if (id == 0) sequential_phase(bodies, n); /* phase 3: one thread updates all */
            SHM_BARRIER();
        }
    }
    double t = shm_kernel_end();

    int valid = 1;
    if (id == 0) {
        struct body *ref = malloc(n * sizeof *ref);
        if (!ref) shm_die(NBODY_NAME ": out of memory for the serial check");
        for (size_t i = 0; i < n; i++)
            init_body(i, &ref[i]);
        for (long it = 0; it < total; it++) {
            double com[3];
            centre_of_mass(ref, n, com);
            process(ref, 0, n, cfg->busy, com);
            if (NBODY_SEQUENTIAL_PHASE) sequential_phase(ref, n);
        }
        valid = shm_check_array(NBODY_NAME " bodies", (const double *)bodies, (const double *)ref,
                                n * sizeof(struct body) / sizeof(double), 1e-12, 1e-300);
        free(ref);
        printf(NBODY_NAME ": n=%zu iterations=%ld busy=%ld workers=%d time/iter=%.4f ms\n", n, cfg->iters, cfg->busy,
               SHM_NPROCS(), 1e3 * t / (double)cfg->iters);
    }
    char size[64];
    snprintf(size, sizeof size, "n=%zu", n);
    return shm_report(NBODY_NAME, "default", size, 1e3 * t / (double)cfg->iters, "ms/iter", t, cfg->iters, valid, NULL);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.n = 32768, .iters = 20, .busy = 400};
    const struct shm_option opts[] = {
        {"size", "n", SHM_OPT_SIZE, &cfg.n, "N", "bodies (64 bytes each)", SHM_RANGE(1, 1L << 32)},
        {"iterations", "i", SHM_OPT_LONG, &cfg.iters, "I", "timed iterations", SHM_AT_LEAST(1)},
        {"busy", "w", SHM_OPT_LONG, &cfg.busy, "W", "busy-loop steps per body", SHM_AT_LEAST(0)},
        SHM_OPTIONS_END};
    int rc = shm_parse_options(argc, argv, opts,
#ifdef NBODY_SEQUENTIAL_PHASE
                               "n-body kernel with a sequential phase, NBodyW (Iosevich & Schuster).");
#else
                               "n-body kernel, NBody (Iosevich & Schuster).");
#endif
    if (rc != SHM_OPTIONS_PARSED) return rc;
    return shm_run_and_finish(worker, &cfg);
}
