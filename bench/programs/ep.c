/* ep -- NAS Parallel Benchmarks EP ("embarrassingly parallel"), the light DSM
 * load case of Wong & Rendell.
 *
 * Generates 2^M pairs of uniform pseudorandom numbers with the NAS linear
 * congruential generator (x <- 5^13 x mod 2^46), turns the pairs that fall in
 * the unit disc into Gaussian deviates (Marsaglia polar method), and counts
 * them in square annuli l <= max(|X|,|Y|) < l+1, also summing X and Y. The
 * pairs are generated in 2^(M-16) batches whose seeds are found by jumping
 * ahead, so every worker takes a contiguous share of the batches and works in
 * private memory; the only sharing is the final all-reduce of the ten counts
 * and two sums.
 *
 * Usage: bench_ep [-m M] [-p P]
 *   default M = 25 (NAS class W; 24 is class S, 28 class A).
 * Figure: Mop/s as NAS reports it (2^(M+1) random numbers per second / 1e6).
 *   The whole computation is timed (there is nothing to warm up).
 * Validation (worker 0): the counts must equal those of a serial EP computed
 * in the same process, and the sums must match it to 1e-9 relative (partial
 * sums are combined in a different order). For M = 24, 25 and 28 the sums are
 * also checked against the NAS reference values (relative 1e-8, NAS's own
 * criterion). */
#include "shm.h"

#define MK 16
#define NK (1 << MK) /* pairs per batch */
#define NQ 10

struct config {
    int m;
};

__extension__ typedef unsigned __int128 u128;

static const uint64_t MOD_MASK = (1ULL << 46) - 1;
static const uint64_t A_MULT = 1220703125ULL; /* 5^13 */
static const uint64_t S_SEED = 271828183ULL;
static const double R46 = 1.0 / 70368744177664.0; /* 2^-46 */

/* x <- a*x mod 2^46; the NAS randlc in exact integer arithmetic. */
static inline uint64_t lcg(uint64_t a, uint64_t x) { return (uint64_t)((u128)a * x) & MOD_MASK; }

struct tally {
    int64_t q[NQ];
    double sx, sy;
};

/* Batches [k0, k1) of the 2^(M-MK), accumulated into *t. */
static void ep_batches(uint64_t k0, uint64_t k1, struct tally *t, double *x)
{
    /* an = A^(2*NK) mod 2^46: the jump over one batch */
    uint64_t an = A_MULT;
    for (int i = 0; i < MK + 1; i++)
        an = lcg(an, an);
    for (uint64_t k = k0; k < k1; k++) {
        /* seed of batch k: S * an^k, by binary exponentiation */
        uint64_t seed = S_SEED, p = an, kk = k;
        while (kk) {
            if (kk & 1) seed = lcg(p, seed);
            p = lcg(p, p);
            kk >>= 1;
        }
        for (int i = 0; i < 2 * NK; i++) {
            seed = lcg(A_MULT, seed);
            x[i] = (double)seed * R46;
        }
        for (int i = 0; i < NK; i++) {
            double x1 = 2.0 * x[2 * i] - 1.0, x2 = 2.0 * x[2 * i + 1] - 1.0;
            double t1 = x1 * x1 + x2 * x2;
            if (t1 <= 1.0) {
                double t2 = sqrt(-2.0 * log(t1) / t1);
                double t3 = x1 * t2, t4 = x2 * t2;
                int l = (int)fmax(fabs(t3), fabs(t4));
                t->q[l]++;
                t->sx += t3;
                t->sy += t4;
            }
        }
    }
}

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID();
    const uint64_t nbatches = 1ULL << (cfg->m - MK);
    double *x = malloc(2 * NK * sizeof *x);
    if (!x) shm_die("ep: out of memory");

    size_t lo, hi;
    shm_even_range(nbatches, id, &lo, &hi);
    struct tally t;
    memset(&t, 0, sizeof t);

    shm_kernel_begin();
    ep_batches(lo, hi, &t, x);
    SHM_REDUCE_SUM_INT64(t.q, NQ);
    double s[2] = {t.sx, t.sy};
    SHM_REDUCE_SUM_DOUBLE(s, 2);
    double time = shm_kernel_end();

    int64_t gc = 0;
    for (int i = 0; i < NQ; i++)
        gc += t.q[i];
    int valid = 1;
    if (id == 0) {
        struct tally ref;
        memset(&ref, 0, sizeof ref);
        ep_batches(0, nbatches, &ref, x);
        for (int i = 0; i < NQ; i++)
            if (t.q[i] != ref.q[i]) {
                fprintf(stderr, "VALIDATION FAILED: ep: count q[%d] = %lld, serial %lld\n", i, (long long)t.q[i],
                        (long long)ref.q[i]);
                valid = 0;
            }
        valid = valid && shm_check_scalar("ep sum X", s[0], ref.sx, 1e-9) &&
                shm_check_scalar("ep sum Y", s[1], ref.sy, 1e-9);
        /* NAS reference sums (NPB ep.c verification values) */
        double vx = 0, vy = 0;
        if (cfg->m == 24)
            vx = -3.247834652034740e+3, vy = -6.958407078382297e+3;
        else if (cfg->m == 25)
            vx = -2.863319731645753e+3, vy = -6.320053679109499e+3;
        else if (cfg->m == 28)
            vx = -4.295875165629892e+3, vy = -1.580732573678431e+4;
        if (valid && vx != 0)
            valid = shm_check_scalar("ep sum X vs NAS reference", s[0], vx, 1e-8) &&
                    shm_check_scalar("ep sum Y vs NAS reference", s[1], vy, 1e-8);
        printf("ep: M=%d pairs=%llu workers=%d gaussian_pairs=%lld sx=%.15e sy=%.15e time=%.4f s\n", cfg->m,
               (unsigned long long)(1ULL << cfg->m), SHM_NPROCS(), (long long)gc, s[0], s[1], time);
        printf("ep: counts");
        for (int i = 0; i < NQ; i++)
            printf(" %lld", (long long)t.q[i]);
        printf("\n");
    }
    free(x);
    double mops = ldexp(1.0, cfg->m + 1) / time / 1e6;
    char size[32], extra[64];
    snprintf(size, sizeof size, "M=%d", cfg->m);
    snprintf(extra, sizeof extra, "\"gaussian_pairs\":%lld", (long long)gc);
    return shm_report("ep", "default", size, mops, "Mop/s", time, 1, valid, extra);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.m = 25};
    const struct shm_option opts[] = {{"log2-pairs", "mn", SHM_OPT_INT, &cfg.m, "M",
                                       "2^M pairs of random numbers (24: class S, 25: W, 28: A)", SHM_RANGE(MK, 40)},
                                      SHM_OPTIONS_END};
    int rc =
        shm_parse_options(argc, argv, opts, "NAS Parallel Benchmarks EP, embarrassingly parallel (Wong & Rendell).");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    return shm_run_and_finish(worker, &cfg);
}
