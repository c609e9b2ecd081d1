/* An SPMD program (every rank runs main, agora_init) with OpenMP inside each
 * rank: built with agoracc -agora-spmd -fopenmp it keeps libgomp, whose
 * teams are the rank's own threads (docs/openmp.md). */
#include <agora/agora.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (agora_init(&argc, &argv) != AGORA_OK) return 1;
    int team = 0;
    long sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
    {
#pragma omp single
        team = omp_get_num_threads();
        sum += omp_get_thread_num() + 1;
    }
    printf("rank %d: %s team %d sum %ld\n", agora_rank(), team == 2 && sum == 3 ? "PASS" : "FAIL", team, sum);
    agora_finalize();
    return 0;
}
