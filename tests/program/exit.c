/* Program mode: the program's exit handlers and destructor functions run
 * once, on rank 0, while global memory is still there; exit(n) from any
 * thread ends the job with n, as in one process (docs/programs.md, Ending).
 *   destructor  threads on both ranks fill a malloc'd table; main returns
 *               0; an atexit handler and a destructor function read the
 *               table and print its checksum (the destructor after the
 *               handler, as libc orders them)
 *   thread_exit a thread on the last rank fills the table, then calls
 *               exit(7) while main waits in pthread_join: the job ends
 *               with 7; the atexit handler and the destructor print the
 *               checksum once each; main never returns from the join
 *   thread_quick_exit  the same thread calls _exit(0): the job ends with
 *               0 at once, no handler or destructor runs
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { THREADS = 2, CELLS = 4096 };

struct table {
    long cells[THREADS][CELLS];
};
struct table *table; /* global heap, homed on rank 0 */
long expected;       /* the checksum main computed: 0 until it has */
int handler_calls, destructor_calls;
int joined; /* set if pthread_join returned after a thread's exit */
int mode_thread_exit;

static long checksum(void)
{
    long sum = 0;
    for (int t = 0; t < THREADS; ++t)
        for (int i = 0; i < CELLS; ++i)
            sum += table->cells[t][i] * (i % 7 + 1);
    return sum;
}

static void *fill(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < CELLS; ++i)
        table->cells[t][i] = (long)(t + 1) * 1000 + i;
    return NULL;
}

static void *fill_then_exit(void *arg)
{
    fill(arg);
    fill((void *)(intptr_t)1); /* both rows, so that the checksum is known */
    expected = checksum();
    fflush(stdout);
    exit(7);
}

static void *fill_then_quick_exit(void *arg)
{
    fill(arg);
    printf("thread: _exit(0)\n");
    fflush(stdout);
    _exit(0);
}

static void handler(void)
{
    ++handler_calls;
    printf("atexit handler: call %d, checksum %ld, %s\n", handler_calls, checksum(),
           checksum() == expected ? "as main computed" : "WRONG");
    fflush(stdout);
}

__attribute__((destructor)) static void validate(void)
{
    ++destructor_calls;
    if (!table) return; /* a run with no mode */
    printf("destructor: call %d, after %d handler call(s), checksum %ld, %s, joined %d\n", destructor_calls,
           handler_calls, checksum(), checksum() == expected ? "as main computed" : "WRONG", joined);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    table = malloc(sizeof *table);
    memset(table, 0, sizeof *table);
    atexit(handler);
    if (strcmp(mode, "destructor") == 0) {
        pthread_t threads[THREADS];
        for (int t = 0; t < THREADS; ++t)
            pthread_create(&threads[t], NULL, fill, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; ++t)
            pthread_join(threads[t], NULL);
        expected = checksum();
        printf("main: checksum %ld\n", expected);
        return 0;
    }
    if (strcmp(mode, "thread_exit") == 0) {
        pthread_t thread;
        pthread_create(&thread, NULL, fill_then_exit, (void *)(intptr_t)0);
        pthread_join(thread, NULL);
        joined = 1;
        printf("main: returned from pthread_join after the thread's exit\n");
        return 0;
    }
    if (strcmp(mode, "thread_quick_exit") == 0) {
        pthread_t thread;
        pthread_create(&thread, NULL, fill_then_quick_exit, (void *)(intptr_t)0);
        pthread_join(thread, NULL);
        joined = 1;
        printf("main: returned from pthread_join after the thread's _exit\n");
        return 0;
    }
    fprintf(stderr, "usage: exit destructor|thread_exit|thread_quick_exit\n");
    return 2;
}
