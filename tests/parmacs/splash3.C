/* What SPLASH-3 programs add to the PARMACS set, used as SPLASH-3 uses it,
 * built as a SPLASH makefile builds it (m4 with c.m4.agora, then agoracc):
 *  - SPLASH3_ROI_BEGIN(); / SPLASH3_ROI_END(); around the parallel part;
 *  - a pointer set under a lock before a BARRIER and read after it by every
 *    thread, each of which read the page before (FMM's Grid: under regc a
 *    rank that kept its copy read it stale, issue 29);
 *  - CONDVARDEC/CONDVARINIT/CONDVARWAIT/CONDVARBCAST: a token passed round
 *    every thread under a lock (cholesky's task queue, barnes' and fmm's
 *    waits on a cell);
 *  - RELEASE_FENCE(); before publishing a pointer to new data, and
 *    ACQUIRE_FENCE(); before reading through it (barnes' tree build);
 *  - PAGE_SIZE alignment of a G_MALLOC'd block (fft, lu, radix), AGETL.
 * Usage: splash3 P   (P threads: CREATE(fn, P), WAIT_FOR_END(P)). */
MAIN_ENV
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 16
#define WORDS 512

struct GlobalMemory {
    LOCKDEC(idlock)
    LOCKDEC(single_lock)
    LOCKDEC(token_lock)
    ALOCKDEC(spare, 4)
    CONDVARDEC(token_moved)
    BARDEC(bar)
    long next_id;
    long token;    /* whose turn, under token_lock */
    long passes;   /* under token_lock */
    long stale;    /* under single_lock: reads of the pointer older than the barrier */
    long *published; /* set once behind RELEASE_FENCE */
    long bad_published;
};
struct GlobalMemory *Global;
long P;
/* FMM's Grid: a global on a page every thread reads early (P is there too). */
long *Grid;
long grid_cells[ROUNDS];

void SlaveStart(void);

int main(int argc, char **argv)
{
    MAIN_INITENV(, 64000000)
    P = argc > 1 ? atol(argv[1]) : 2;
    if (P < 1 || P > 64) {
        fprintf(stderr, "usage: splash3 P(1..64)\n");
        exit(2);
    }
    Global = (struct GlobalMemory *)G_MALLOC(sizeof(struct GlobalMemory));
    memset(Global, 0, sizeof *Global);
    LOCKINIT(Global->idlock)
    LOCKINIT(Global->single_lock)
    LOCKINIT(Global->token_lock)
    ALOCKINIT(Global->spare, 4)
    CONDVARINIT(Global->token_moved)
    BARINIT(Global->bar, P)
    SPLASH3_ROI_BEGIN();
    CREATE(SlaveStart, P)
    WAIT_FOR_END(P)
    SPLASH3_ROI_END();
    int ok = 1;
    if (Global->stale) {
        printf("FAIL: %ld reads of a pointer set under a lock before a barrier were stale after it\n", Global->stale);
        ok = 0;
    }
    if (Global->passes != ROUNDS * P) {
        printf("FAIL: the token went round %ld times, expected %ld\n", Global->passes, ROUNDS * P);
        ok = 0;
    }
    if (Global->bad_published) {
        printf("FAIL: %ld words read through a fenced pointer were not the ones written\n", Global->bad_published);
        ok = 0;
    }
    if (ok) printf("PASS splash3 P=%ld\n", P);
    MAIN_END
    return ok ? 0 : 1;
}

void SlaveStart(void)
{
    long MyNum;
    LOCK(Global->idlock)
    MyNum = Global->next_id++;
    UNLOCK(Global->idlock)

    /* FMM: every thread holds a copy of Grid's page before the store. */
    long *seen = Grid;
    BARRIER(Global->bar, P)
    for (long round = 0; round < ROUNDS; round++) {
        if (round % P == MyNum) {
            LOCK(Global->single_lock)
            Grid = &grid_cells[round];
            UNLOCK(Global->single_lock)
        }
        BARRIER(Global->bar, P)
        seen = Grid;
        if (seen != &grid_cells[round]) {
            LOCK(Global->single_lock)
            Global->stale++;
            UNLOCK(Global->single_lock)
        }
        BARRIER(Global->bar, P)
    }

    /* A token round every thread, each waiting for its turn. */
    for (long round = 0; round < ROUNDS; round++) {
        LOCK(Global->token_lock)
        while (Global->token != MyNum) CONDVARWAIT(Global->token_moved, Global->token_lock)
        Global->token = (Global->token + 1) % P;
        Global->passes++;
        CONDVARBCAST(Global->token_moved)
        UNLOCK(Global->token_lock)
    }
    BARRIER(Global->bar, P)

    /* barnes: new data behind a release fence, then the pointer to it. */
    if (MyNum == 0) {
        long *block = (long *)G_MALLOC(WORDS * sizeof(long) + PAGE_SIZE);
        block = (long *)(((unsigned long)block) + PAGE_SIZE - ((unsigned long)block) % PAGE_SIZE);
        for (long i = 0; i < WORDS; i++) block[i] = 1000 + i;
        RELEASE_FENCE();
        Global->published = block;
        FULL_FENCE();
    } else {
        long *block = NULL;
        double give_up = agora_wtime() + 60;
        while (!block && agora_wtime() < give_up) {
            ACQUIRE_FENCE();
            block = Global->published;
        }
        ACQUIRE_FENCE();
        long bad = 0;
        if (!block) bad = WORDS;
        else
            for (long i = 0; i < WORDS; i++) bad += block[i] != 1000 + i;
        if ((unsigned long)block % PAGE_SIZE) bad++;
        ALOCK(Global->spare, 1)
        Global->bad_published += bad;
        AULOCK(Global->spare, 1)
    }
    /* AGETL names an element of a lock array. */
    agora_lock(&AGETL(Global->spare, 2));
    agora_unlock(&AGETL(Global->spare, 2));
}
