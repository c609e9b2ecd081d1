/* Finding another rank's process on this machine, for tests that kill one
 * mid-run (servers.c, stress.c). Open MPI only: it reads the job id and
 * rank Open MPI puts in each process's environment. */
#pragma once
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* The pid of this job's process of MPI rank `rank` (its environment says
 * OMPI_COMM_WORLD_RANK and the same job id), or -1. */
static inline pid_t pid_of_rank(int rank)
{
    const char *job = getenv("OMPI_MCA_ess_base_jobid");
    char want_rank[64], want_job[128];
    snprintf(want_rank, sizeof want_rank, "OMPI_COMM_WORLD_RANK=%d", rank);
    snprintf(want_job, sizeof want_job, "OMPI_MCA_ess_base_jobid=%s", job ? job : "");
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = -1;
    static char env[1 << 16];
    while (d && (e = readdir(d)) && found < 0) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0) continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t len = fread(env, 1, sizeof env - 1, f);
        fclose(f);
        env[len] = 0;
        int rank_ok = 0, job_ok = !job;
        for (size_t i = 0; i < len; i += strlen(env + i) + 1) {
            if (!strcmp(env + i, want_rank)) rank_ok = 1;
            if (job && !strcmp(env + i, want_job)) job_ok = 1;
        }
        if (rank_ok && job_ok) found = pid;
    }
    if (d) closedir(d);
    return found;
}
