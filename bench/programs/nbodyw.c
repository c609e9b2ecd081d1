/* nbodyw -- nbody plus a sequential phase in which one worker updates all the
 * bodies (Iosevich & Schuster's NBodyW). The whole program is nbody.c; this file only
 * switches the sequential phase on so that each program has its own source. */
#define NBODY_SEQUENTIAL_PHASE 1
#include "nbody.c"
