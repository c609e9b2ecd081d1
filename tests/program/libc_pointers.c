/* Pointers into libc's own data handed from main to threads on other ranks
 * (issue 26): main keeps stdout in a global FILE * (as SPLASH-3 WATER does)
 * and a strerror string in a global; threads on every rank print through
 * them. Without the same address layout on every rank the FILE * names
 * nothing on rank 1 (a segmentation fault "outside global memory"). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define THREADS 4

FILE *out;
const char *message;
static char expected[64];
static long mismatches;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    fprintf(out, "thread %ld prints through main's FILE *\n", (long)arg);
    fflush(out);
    if (strcmp(message, expected) != 0) {
        pthread_mutex_lock(&lock);
        mismatches++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void)
{
    out = stdout;
    message = strerror(ENOENT);
    snprintf(expected, sizeof expected, "%s", message);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    if (mismatches) {
        printf("FAIL: %ld threads read main's strerror text differently\n", mismatches);
        return 1;
    }
    printf("PASS program libc_pointers\n");
    return 0;
}
