/* OpenMP misuse under Agora's runtime: each mode must end the job with a
 * message naming the call (tests/program/CMakeLists.txt). */
#include <omp.h>
#include <stdio.h>
#include <string.h>

static int counter;

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "none";
    if (!strcmp(mode, "relock")) {
        omp_lock_t lock;
        omp_init_lock(&lock);
        omp_set_lock(&lock);
        omp_set_lock(&lock); /* deadlock in libgomp; a message here */
    } else if (!strcmp(mode, "unset_nest")) {
        omp_nest_lock_t lock;
        omp_init_nest_lock(&lock);
        omp_unset_nest_lock(&lock);
    } else if (!strcmp(mode, "schedule")) { /* run with a bad OMP_SCHEDULE */
#pragma omp parallel for schedule(runtime)
        for (int i = 0; i < 10; i++) {
#pragma omp atomic
            counter++;
        }
    } else if (!strcmp(mode, "huge_team")) {
#pragma omp parallel num_threads(5000)
        {
#pragma omp atomic
            counter++;
        }
    }
    printf("omp_misuse %s: counter %d\n", mode, counter);
    return 0;
}
