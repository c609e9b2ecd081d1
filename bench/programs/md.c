/* md -- molecular dynamics with velocity Verlet (OmpSCR c_md, as ported to
 * threads in Samhita/RegC).
 *
 * n particles in a 10x10x10 box interact through the central pair potential
 * v(d) = sin^2(min(d, pi/2)). Every step computes all forces (each worker reads
 * every position and writes the forces of the particles it owns: O(n) work per
 * particle), the potential and kinetic energy, and then advances its own
 * particles. The energies are combined either
 *   --variant lock    under a mutex into shared accumulators (Samhita/RegC's
 *                     pthreads code), or
 *   --variant reduce  with an all-reduce (OmpSCR's OpenMP reduction).
 *
 * Each particle's vectors are padded to 4 doubles (32 bytes) so that no
 * particle straddles a page, and positions, velocities, accelerations and
 * forces are separate allocations, so under block placement a worker homes
 * the same particles in all four and writes only its own pages.
 *
 * Usage: bench_md [-n PARTICLES] [-i STEPS] [--variant lock|reduce] [-p P]
 *   defaults 4096 particles, 10 timed steps after the initial force
 *   evaluation and one untimed warm-up step.
 * Figure: ms per step.
 * Validation (worker 0): a serial run in private memory. Positions and
 * velocities must agree to 1e-12 relative (every force is summed by one worker
 * in the same order as the serial code, so they should agree exactly); the
 * energies to 1e-9 relative (partial sums are combined in a different order),
 * and total energy must be conserved to 1e-6 relative. */
#include "shm.h"

#define ND 3     /* dimensions */
#define STRIDE 4 /* doubles per particle (padded) */

struct config {
    size_t n;
    long steps;
    int use_lock;
};

static const double mass = 1.0, dt = 1.0e-4, box = 10.0;
static const double PI2 = 3.14159265358979323846 / 2.0;

static double v_of(double x)
{
    double s = sin(x < PI2 ? x : PI2);
    return s * s;
}
static double dv_of(double x)
{
    double y = x < PI2 ? x : PI2;
    return 2.0 * sin(y) * cos(y);
}

static void init_pos(size_t i, double *p)
{
    for (int k = 0; k < ND; k++)
        p[k] = box * shm_u01(shm_mix64(0x5eed0000ULL + i * ND + (uint64_t)k));
    p[ND] = 0.0;
}

/* Forces on particles [lo, hi) from all n; returns the potential energy of
 * those particles (each pair counted half from each side) and adds their
 * kinetic energy to *kin. Shared by the parallel and the serial code. */
static double forces(size_t n, size_t lo, size_t hi, const double *pos, const double *vel, double *f, double *kin)
{
    double pot = 0.0, k2 = 0.0;
    for (size_t i = lo; i < hi; i++) {
        const double *pi = pos + i * STRIDE;
        double fi[ND] = {0.0, 0.0, 0.0};
        for (size_t j = 0; j < n; j++) {
            if (j == i) continue;
            const double *pj = pos + j * STRIDE;
            double rij[ND], d2 = 0.0;
            for (int k = 0; k < ND; k++) {
                rij[k] = pi[k] - pj[k];
                d2 += rij[k] * rij[k];
            }
            double d = sqrt(d2);
            pot += 0.5 * v_of(d);
            double s = dv_of(d) / d;
            for (int k = 0; k < ND; k++)
                fi[k] -= rij[k] * s;
        }
        for (int k = 0; k < ND; k++) {
            f[i * STRIDE + k] = fi[k];
            k2 += vel[i * STRIDE + k] * vel[i * STRIDE + k];
        }
    }
    *kin += 0.5 * mass * k2;
    return pot;
}

/* Velocity Verlet update of particles [lo, hi). */
static void update(size_t lo, size_t hi, double *pos, double *vel, double *acc, const double *f)
{
    const double rmass = 1.0 / mass;
    for (size_t i = lo; i < hi; i++)
        for (int k = 0; k < ND; k++) {
            size_t x = i * STRIDE + k;
            pos[x] += vel[x] * dt + 0.5 * dt * dt * acc[x];
            vel[x] += 0.5 * dt * (f[x] * rmass + acc[x]);
            acc[x] = f[x] * rmass;
        }
}

struct serial_result {
    double *pos, *vel, e0, pot, kin;
};

static struct serial_result serial_md(size_t n, long steps)
{
    struct serial_result r;
    r.pos = malloc(n * STRIDE * sizeof(double));
    r.vel = calloc(n * STRIDE, sizeof(double));
    double *acc = calloc(n * STRIDE, sizeof(double)), *f = calloc(n * STRIDE, sizeof(double));
    if (!r.pos || !r.vel || !acc || !f) shm_die("md: out of memory for the serial check");
    for (size_t i = 0; i < n; i++)
        init_pos(i, r.pos + i * STRIDE);
    r.kin = 0.0;
    r.pot = forces(n, 0, n, r.pos, r.vel, f, &r.kin);
    r.e0 = r.pot + r.kin;
    for (long s = 0; s < steps; s++) {
        update(0, n, r.pos, r.vel, acc, f);
        r.kin = 0.0;
        r.pot = forces(n, 0, n, r.pos, r.vel, f, &r.kin);
    }
    free(acc);
    free(f);
    return r;
}

static int worker(void *arg)
{
    const struct config *cfg = arg;
    const int id = SHM_ID();
    const size_t n = cfg->n;
    const size_t bytes = n * STRIDE * sizeof(double);

    double *pos = shm_alloc_or_die(bytes, "positions");
    double *vel = shm_alloc_or_die(bytes, "velocities");
    double *acc = shm_alloc_or_die(bytes, "accelerations");
    double *f = shm_alloc_or_die(bytes, "forces");
    /* lock variant: [slot][pot, kin], two slots used alternately so that the
     * next step's slot can be cleared while this one is being read */
    double *energy = shm_alloc_or_die(4 * sizeof(double), "energy accumulators");
    SHM_LOCK_DECL(elock) = SHM_LOCK_CREATE();

    size_t lo, hi;
    shm_owned_range(pos, n, STRIDE * sizeof(double), id, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        init_pos(i, pos + i * STRIDE); /* velocities and accelerations start at 0 */
    SHM_BARRIER();

    /* Step s computes forces and energies for the current positions (s = 0 is
     * the initial evaluation giving E0) and then, except after the last
     * evaluation, advances the owned particles. */
    double pot = 0.0, kin = 0.0, e0 = 0.0;
    long total = cfg->steps + 1; /* warm-up step, then the timed ones */
    for (long s = 0; s <= total; s++) {
        if (s == 2) shm_kernel_begin();
        double e[2];
        e[1] = 0.0;
        e[0] = forces(n, lo, hi, pos, vel, f, &e[1]);
        if (cfg->use_lock) {
            int slot = (int)(s & 1);
            SHM_LOCK(elock);
            energy[2 * slot] += e[0];
            energy[2 * slot + 1] += e[1];
            SHM_UNLOCK(elock);
            SHM_BARRIER(); /* all contributions are in, all forces computed */
            pot = energy[2 * slot];
            kin = energy[2 * slot + 1];
            if (id == 0) /* last read of the other slot was before this barrier */
                energy[2 * (1 - slot)] = energy[2 * (1 - slot) + 1] = 0.0;
        } else {
            /* the all-reduce also guarantees that every worker has finished
             * reading the positions before anyone moves its particles */
            SHM_REDUCE_SUM_DOUBLE(e, 2);
            pot = e[0];
            kin = e[1];
        }
        if (s == 0) e0 = pot + kin;
        if (s == total) break;
        update(lo, hi, pos, vel, acc, f);
        SHM_BARRIER(); /* new positions visible before the next force pass */
    }
    double t = shm_kernel_end();
    const char *variant = cfg->use_lock ? "lock" : "reduce";

    int valid = 1;
    if (id == 0) {
        struct serial_result r = serial_md(n, total);
        double *p = malloc(bytes), *vv = malloc(bytes);
        if (!p || !vv) shm_die("md: out of memory");
        memcpy(p, pos, bytes);
        memcpy(vv, vel, bytes);
        valid = shm_check_array("md positions", p, r.pos, n * STRIDE, 1e-12, 1e-12) &&
                shm_check_array("md velocities", vv, r.vel, n * STRIDE, 1e-9, 1e-12) &&
                shm_check_scalar("md potential energy", pot, r.pot, 1e-9) &&
                shm_check_scalar("md kinetic energy", kin, r.kin, 1e-9) &&
                shm_check_scalar("md energy conservation", pot + kin, e0, 1e-6);
        printf("md(%s): n=%zu steps=%ld workers=%d E0=%.10e E=%.10e drift=%.3e time/step=%.4f ms\n", variant, n,
               cfg->steps, SHM_NPROCS(), e0, pot + kin, (pot + kin - e0) / e0, 1e3 * t / (double)cfg->steps);
        free(p);
        free(vv);
        free(r.pos);
        free(r.vel);
    }
    char size[64];
    snprintf(size, sizeof size, "n=%zu", n);
    return shm_report("md", variant, size, 1e3 * t / (double)cfg->steps, "ms/step", t, cfg->steps, valid, NULL);
}

int main(int argc, char **argv)
{
    SHM_INIT(&argc, &argv);
    struct config cfg = {.n = 4096, .steps = 10, .use_lock = 0};
    const struct shm_option opts[] = {{"size", "n", SHM_OPT_SIZE, &cfg.n, "N", "particles", SHM_RANGE(2, 1L << 32)},
                                      {"steps", "i", SHM_OPT_LONG, &cfg.steps, "S", "timed steps", SHM_AT_LEAST(1)},
                                      {"variant", "v", SHM_OPT_CHOICE, &cfg.use_lock, NULL,
                                       "combine the energies with an all-reduce or under a lock",
                                       .choices = "reduce|lock"},
                                      SHM_OPTIONS_END};
    int rc = shm_parse_options(argc, argv, opts, "Molecular dynamics with velocity Verlet (OmpSCR, Samhita/RegC).");
    if (rc != SHM_OPTIONS_PARSED) return rc;
    return shm_run_and_finish(worker, &cfg);
}
