/* A SPLASH-style PARMACS program (built as SPLASH builds: m4 with the macro
 * file, then the C compiler): shared state in a G_MALLOC'd structure and
 * arrays reached through global pointers, a lock, a lock array, barriers
 * between phases, a pause flag, CREATE / WAIT_FOR_END.
 *
 *   phases P splash2|splash3
 *
 * splash2: main CREATEs P-1 threads one by one (CREATE(fn)), numbers them
 * through a lock, WAIT_FOR_END(P-1); splash3: CREATE(fn, P) starts P-1 and
 * runs fn in main, GET_PID numbers them, WAIT_FOR_END(P). Every phase's
 * result is checked; prints PASS or exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

MAIN_ENV

#define NBINS 16
#define N 8192

struct GlobalMemory {
  LOCKDEC(idlock)
  LOCKDEC(sumlock)
  ALOCKDEC(binlocks, NBINS)
  BARDEC(start)
  BARDEC(phase)
  PAUSEDEC(ready)
  long pid;
  double sum;
  long bins[NBINS];
  long seen[64];
  double scale;
};

struct GlobalMemory *Global;
double *a;
double *b;
long P;
int splash3;

void SlaveStart(void);

int main(int argc, char **argv)
{
  long i;
  unsigned long start, end;

  MAIN_INITENV(,8000000)
  if (argc != 3 || atol(argv[1]) < 1 || atol(argv[1]) > 64 ||
      (strcmp(argv[2], "splash2") != 0 && strcmp(argv[2], "splash3") != 0)) {
    fprintf(stderr, "usage: phases P(1..64) splash2|splash3\n");
    exit(2);
  }
  P = atol(argv[1]);
  splash3 = strcmp(argv[2], "splash3") == 0;

  Global = (struct GlobalMemory *) G_MALLOC(sizeof(struct GlobalMemory));
  a = (double *) G_MALLOC(N * sizeof(double));
  b = (double *) G_MALLOC(N * sizeof(double), P - 1);
  if (Global == NULL || a == NULL || b == NULL) {
    fprintf(stderr, "G_MALLOC failed\n");
    exit(1);
  }
  LOCKINIT(Global->idlock)
  LOCKINIT(Global->sumlock)
  ALOCKINIT(Global->binlocks, NBINS)
  BARINIT(Global->start)
  BARINIT(Global->phase)
  PAUSEINIT(Global->ready)
  Global->pid = 0;
  Global->sum = 0.0;
  Global->scale = 0.0;
  for (i = 0; i < NBINS; i++) Global->bins[i] = 0;
  for (i = 0; i < 64; i++) Global->seen[i] = 0;

  CLOCK(start)
  if (splash3) {
    CREATE(SlaveStart, P)
    WAIT_FOR_END(P)
  } else {
    for (i = 1; i < P; i++) {
      CREATE(SlaveStart)
    }
    SlaveStart();
    WAIT_FOR_END(P - 1)
  }
  CLOCK(end)

  {
    double expected = 3.0 * ((double) N * (N - 1) / 2.0);
    int ok = Global->sum == expected;
    for (i = 0; i < NBINS; i++) ok = ok && Global->bins[i] == N / NBINS;
    for (i = 0; i < P; i++) ok = ok && Global->seen[i] == 1;
    if (!ok) {
      printf("FAIL phases: sum %.0f (expected %.0f), bins[0] %ld (expected %d)\n",
             Global->sum, expected, Global->bins[0], N / NBINS);
      exit(1);
    }
    printf("PASS phases P=%ld %s sum=%.0f (%lu us)\n", P, argv[2], Global->sum, end - start);
  }
  MAIN_END
}

void SlaveStart(void)
{
  long MyNum, i;
  double local = 0.0;

  if (splash3) {
    GET_PID(MyNum)
  } else {
    LOCK(Global->idlock)
    MyNum = Global->pid++;
    UNLOCK(Global->idlock)
  }
  if (MyNum < 0 || MyNum >= P) {
    printf("FAIL phases: thread number %ld outside 0..%ld\n", MyNum, P - 1);
    exit(1);
  }
  Global->seen[MyNum]++;  /* each number once: checked by main */

  /* Thread 0 publishes the scale; the others wait for the flag. */
  if (MyNum == 0) {
    Global->scale = 3.0;
    SETPAUSE(Global->ready)
  } else {
    WAITPAUSE(Global->ready)
  }
  BARRIER(Global->start, P)

  /* Phase 1: a[i] = i, cyclically over the threads. */
  for (i = MyNum; i < N; i += P) a[i] = (double) i;
  BARRIER(Global->phase, P)

  /* Phase 2: b is a reversed and scaled, blocks over the threads: most
   * reads are of elements another thread wrote. */
  for (i = MyNum * (N / P); i < (MyNum == P - 1 ? N : (MyNum + 1) * (N / P)); i++)
    b[i] = Global->scale * a[N - 1 - i];
  BARRIER(Global->phase, P)

  /* Phase 3: sums of b (cyclic again) into one total and into bins. */
  for (i = MyNum; i < N; i += P) {
    local += b[i];
    ALOCK(Global->binlocks, i % NBINS)
    Global->bins[i % NBINS]++;
    AULOCK(Global->binlocks, i % NBINS)
  }
  LOCK(Global->sumlock)
  Global->sum += local;
  UNLOCK(Global->sumlock)
  BARRIER(Global->phase, P)
}
