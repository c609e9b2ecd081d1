/* Phases of two workers (ids 0 and 1) run at once by run_pair; each records
 * its process in worker_pid, so that a program-mode run shows they were on
 * different ranks. The same source also builds as a plain pthreads program
 * (the reference run), where both share one process. */
#pragma once
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "failure_count.h"

static pid_t worker_pid[2];

#pragma weak agora_program_mode
int agora_program_mode(void);
static int in_program_mode(void) { return agora_program_mode && agora_program_mode(); }

static void run_pair(const char *phase, void *(*fn)(void *))
{
    pthread_t t[2];
    for (long i = 0; i < 2; ++i)
        CHECK(pthread_create(&t[i], NULL, fn, (void *)i) == 0, "%s: create", phase);
    for (int i = 0; i < 2; ++i)
        CHECK(pthread_join(t[i], NULL) == 0, "%s: join", phase);
    CHECK(!in_program_mode() || worker_pid[0] != worker_pid[1], "%s: both workers ran in process %d (want two ranks)",
          phase, (int)worker_pid[0]);
    printf("%s done (failures so far %d)\n", phase, failures);
    fflush(stdout);
}
