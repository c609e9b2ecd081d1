/* An SPMD program built against an installed Agora (tests/install): every
 * rank writes its block of a collective array, rank 0 checks the total after
 * a barrier, and the library's version is the headers'. */
#include <agora/agora.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (agora_init(&argc, &argv) != AGORA_OK) return 1;
    int rank = agora_rank(), ranks = agora_nranks();
    const long per_rank = 1000;
    void *memory = NULL;
    if (agora_mem_alloc(sizeof(long) * per_rank * ranks, &memory) != AGORA_OK) return 1;
    long *values = memory;
    for (long i = 0; i < per_rank; i++)
        values[rank * per_rank + i] = rank * per_rank + i;
    agora_barrier();
    int status = 0;
    if (rank == 0) {
        long sum = 0, n = per_rank * ranks;
        for (long i = 0; i < n; i++)
            sum += values[i];
        if (sum != n * (n - 1) / 2 || strcmp(agora_version(), AGORA_VERSION_STRING) != 0) {
            printf("FAIL hello_agora: sum %ld (expected %ld), version %s (headers %s)\n", sum, n * (n - 1) / 2,
                   agora_version(), AGORA_VERSION_STRING);
            status = 1;
        } else {
            printf("PASS hello_agora on %d ranks, Agora %s\n", ranks, agora_version());
        }
    }
    agora_barrier();
    agora_finalize();
    return status;
}
