/* Programs that fail on purpose, for tests/mpi/expect_failure.sh:
 *   misbehave exit|kill|abort     rank 1 dies that way while the others wait
 *   misbehave segv                a wild pointer outside global memory
 *   misbehave unallocated         a global address no allocation covers
 *   misbehave occupied            a page mapped at 32 TiB + 2 GiB, inside the
 *                                 global range, before agora_init
 *   misbehave cyclic_maps         a cyclic allocation of more pages than
 *                                 vm.max_map_count lets a rank protect apart
 *   misbehave alloc_differ        agora_alloc(2^63) on rank 0, agora_alloc(0)
 *                                 elsewhere (-2^63 == 2^63 in int64)
 *   misbehave ok                  does nothing wrong                         */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "ok";
    if (!strcmp(how, "occupied") &&
        mmap((void *)(0x200000000000ull + (2ull << 30)), 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED) {
        perror("mmap");
        return 0; /* the test expects a failure: this one would not be agora's */
    }
    agora_init(&argc, &argv);
    int *data = agora_alloc(4096 * 4);
    agora_barrier();
    if (agora_rank() == 1 || agora_nranks() == 1) {
        if (!strcmp(how, "exit")) exit(3);
        if (!strcmp(how, "kill")) raise(SIGKILL);
        if (!strcmp(how, "abort")) abort();
    }
    if (agora_rank() == 0) {
        if (!strcmp(how, "segv")) {
            volatile uintptr_t address = 16;
            volatile int *wild = (volatile int *)address;
            *wild = 1;
        }
        if (!strcmp(how, "unallocated")) {
            /* Past every collective allocation, still inside the global range. */
            volatile int *beyond = (volatile int *)((uintptr_t)data + 64 * 4096);
            *beyond = 1;
        }
    }
    if (!strcmp(how, "alloc_differ")) agora_alloc(agora_rank() == 0 ? (size_t)1 << 63 : 0);
    if (!strcmp(how, "cyclic_maps")) {
        long max_maps = 65530;
        FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
        if (f) {
            if (fscanf(f, "%ld", &max_maps) != 1) max_maps = 65530;
            fclose(f);
        }
        size_t pages = 2 * (size_t)max_maps * (size_t)agora_nranks();
        char *c = agora_alloc_placed(pages * 4096, AGORA_PLACE_CYCLIC, 0);
        CHECK(c != NULL, "cyclic allocation of %zu pages failed: give more AGORA_MEMORY", pages);
        c[agora_rank() * 4096] = 1;
    }
    data[agora_rank()] = 1;
    agora_barrier();  /* the survivors wait here for the dead rank */
    agora_finalize();
    return 0;
}
