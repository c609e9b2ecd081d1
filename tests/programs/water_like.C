/* A SPLASH-2 style PARMACS program, shaped like WATER-NSQUARED: a global
 * memory structure reached through a G_MALLOC'd pointer, processes
 * numbered under an id lock, one BARRIER between phases, an array of
 * per-molecule locks (ALOCKDEC) for the force accumulation, and a global
 * sum under a lock. Build it as SPLASH codes are built:
 *     m4 c.m4.pthreads water_like.C > water_like.c   (or Agora's c.m4.agora)
 *
 *   water_like [molecules] [processes] [steps] */
MAIN_ENV

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXPROCS 64
#define MAXMOL 16384

struct molecule {
    double pos[3];
    double vel[3];
    double force[3];
};

struct GlobalMemory {
    LOCKDEC(IdLock)
    LOCKDEC(PotLock)
    ALOCKDEC(MolLock, MAXMOL)
    BARDEC(start)
    long Id;
    double Potential;       /* summed over all steps */
    unsigned long starttime, endtime;
};

struct GlobalMemory *gl;
struct molecule *mols;
long NMOL = 256, NPROCS = 2, NSTEPS = 3;

/* Three sites per molecule (O, H, H at fixed offsets from the centre), as in
 * WATER: nine site-site Coulomb terms plus Lennard-Jones between the
 * oxygens; the force acts on the centre. */
static const double site_offset[3][3] = {{0, 0, 0}, {0.08, 0.06, 0}, {-0.08, 0.06, 0}};
static const double site_charge[3] = {-0.8, 0.4, 0.4};

static void pair_force(const struct molecule *a, const struct molecule *b, double f[3], double *pot) {
    f[0] = f[1] = f[2] = 0;
    for (int s = 0; s < 3; s++)
        for (int t = 0; t < 3; t++) {
            double d[3], r2 = 1e-2;
            for (int k = 0; k < 3; k++) {
                d[k] = (a->pos[k] + site_offset[s][k]) - (b->pos[k] + site_offset[t][k]);
                r2 += d[k] * d[k];
            }
            double r = sqrt(r2), inv = 1.0 / r2;
            double coulomb = site_charge[s] * site_charge[t] / r * 1e-6;
            double scale = coulomb * inv;
            if (s == 0 && t == 0) {
                double inv3 = inv * inv * inv;
                scale += inv3 * inv * (12.0 * inv3 - 6.0) * 1e-6;
                *pot += (inv3 * inv3 - inv3) * 1e-6;
            }
            *pot += coulomb;
            for (int k = 0; k < 3; k++) f[k] += scale * d[k];
        }
}

/* Forces of the pairs (i, i+1 .. i+N/2) for the molecules this process
 * owns, accumulated locally and then added under each molecule's lock, as
 * WATER's INTERF does. */
static void interf(long first, long last, double (*local)[3], double *pot) {
    memset(local, 0, sizeof(double) * 3 * NMOL);
    for (long i = first; i < last; i++)
        for (long h = 1; h <= NMOL / 2; h++) {
            long j = (i + h) % NMOL;
            if (NMOL % 2 == 0 && h == NMOL / 2 && i >= NMOL / 2) continue; /* each pair once */
            double f[3];
            pair_force(&mols[i], &mols[j], f, pot);
            for (int k = 0; k < 3; k++) {
                local[i][k] += f[k];
                local[j][k] -= f[k];
            }
        }
    for (long m = 0; m < NMOL; m++) {
        if (local[m][0] == 0 && local[m][1] == 0 && local[m][2] == 0) continue;
        ALOCK(gl->MolLock, m)
        for (int k = 0; k < 3; k++) mols[m].force[k] += local[m][k];
        AULOCK(gl->MolLock, m)
    }
}

void SlaveStart(void) {
    long MyNum;
    LOCK(gl->IdLock)
    MyNum = gl->Id++;
    UNLOCK(gl->IdLock)
    long per = NMOL / NPROCS, extra = NMOL % NPROCS;
    long first = MyNum * per + (MyNum < extra ? MyNum : extra);
    long last = first + per + (MyNum < extra);
    double (*local)[3] = malloc(sizeof(double) * 3 * NMOL);

    BARRIER(gl->start, NPROCS)
    if (MyNum == 0) CLOCK(gl->starttime)
    for (long step = 0; step < NSTEPS; step++) {
        double pot = 0;
        interf(first, last, local, &pot);
        LOCK(gl->PotLock)
        gl->Potential += pot;
        UNLOCK(gl->PotLock)
        BARRIER(gl->start, NPROCS)
        for (long i = first; i < last; i++)
            for (int k = 0; k < 3; k++) {
                mols[i].vel[k] += 1e-3 * mols[i].force[k];
                mols[i].pos[k] += 1e-3 * mols[i].vel[k];
                mols[i].force[k] = 0;
            }
        BARRIER(gl->start, NPROCS)
    }
    if (MyNum == 0) CLOCK(gl->endtime)
    free(local);
}

static void initial_positions(struct molecule *m) {
    for (long i = 0; i < NMOL; i++) {
        m[i].pos[0] = (double)(i % 16);
        m[i].pos[1] = (double)((i / 16) % 16);
        m[i].pos[2] = (double)(i / 256) + 0.01 * (double)(i % 7);
        for (int k = 0; k < 3; k++) m[i].vel[k] = m[i].force[k] = 0;
    }
}

/* The same steps on one thread, with the same pair order per molecule. */
static double serial_reference(struct molecule *m) {
    struct molecule *saved = mols;
    mols = m;
    double (*local)[3] = malloc(sizeof(double) * 3 * NMOL);
    double total = 0;
    for (long step = 0; step < NSTEPS; step++) {
        double pot = 0;
        memset(local, 0, sizeof(double) * 3 * NMOL);
        for (long i = 0; i < NMOL; i++)
            for (long h = 1; h <= NMOL / 2; h++) {
                long j = (i + h) % NMOL;
                if (NMOL % 2 == 0 && h == NMOL / 2 && i >= NMOL / 2) continue;
                double f[3];
                pair_force(&m[i], &m[j], f, &pot);
                for (int k = 0; k < 3; k++) {
                    local[i][k] += f[k];
                    local[j][k] -= f[k];
                }
            }
        total += pot;
        for (long i = 0; i < NMOL; i++)
            for (int k = 0; k < 3; k++) {
                m[i].vel[k] += 1e-3 * local[i][k];
                m[i].pos[k] += 1e-3 * m[i].vel[k];
            }
    }
    free(local);
    mols = saved;
    return total;
}

int main(int argc, char **argv) {
    if (argc > 1) NMOL = atol(argv[1]);
    if (argc > 2) NPROCS = atol(argv[2]);
    if (argc > 3) NSTEPS = atol(argv[3]);
    if (NMOL < 2 || NMOL > MAXMOL || NPROCS < 1 || NPROCS > MAXPROCS || NSTEPS < 1) {
        fprintf(stderr, "usage: %s [molecules 2..%d] [processes 1..%d] [steps >= 1]\n", argv[0], MAXMOL,
                MAXPROCS);
        exit(2);
    }
    MAIN_INITENV
    gl = (struct GlobalMemory *)G_MALLOC(sizeof(struct GlobalMemory));
    mols = (struct molecule *)G_MALLOC(sizeof(struct molecule) * NMOL);
    if (!gl || !mols) { fprintf(stderr, "G_MALLOC failed\n"); exit(1); }
    LOCKINIT(gl->IdLock)
    LOCKINIT(gl->PotLock)
    ALOCKINIT(gl->MolLock, MAXMOL)
    BARINIT(gl->start)
    gl->Id = 0;
    gl->Potential = 0;
    initial_positions(mols);

    for (long p = 1; p < NPROCS; p++) CREATE(SlaveStart)
    SlaveStart();
    WAIT_FOR_END(NPROCS - 1)

    /* Validate against a serial run: positions to 1e-9 relative, energy too. */
    struct molecule *ref = malloc(sizeof(struct molecule) * NMOL);
    initial_positions(ref);
    double ref_pot = serial_reference(ref);
    double worst = 0;
    for (long i = 0; i < NMOL; i++)
        for (int k = 0; k < 3; k++) {
            double d = fabs(mols[i].pos[k] - ref[i].pos[k]) / (1 + fabs(ref[i].pos[k]));
            if (d > worst) worst = d;
        }
    double pot_err = fabs(gl->Potential - ref_pot) / (1 + fabs(ref_pot));
    int ok = worst < 1e-9 && pot_err < 1e-9 && gl->Id == NPROCS;
    /* The sums meet in lock order, so the last bits vary between runs:
     * the line prints what is checked, to 7 digits. */
    printf("water_like molecules=%ld processes=%ld steps=%ld: %s (potential %.6e, positions within 1e-9 of "
           "the serial run: %s)\n",
           NMOL, NPROCS, NSTEPS, ok ? "ok" : "WRONG", ref_pot, worst < 1e-9 ? "yes" : "no");
    if (!ok)
        fprintf(stderr, "potential %.12e, expected %.12e; worst position error %.3e; %ld processes numbered\n",
                gl->Potential, ref_pot, worst, gl->Id);
    printf("parallel_s=%.6f\n", (double)(gl->endtime - gl->starttime) * 1e-6);
    free(ref);
    if (!ok) exit(1);
    MAIN_END
}
