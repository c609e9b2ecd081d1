/* Program mode: endings and misuse, one per mode (argv[1]).
 *   overflow     a thread on the last rank recurses past its stack: the
 *                guard page stops it with "stack overflow" (never corruption)
 *   main_overflow  main does the same
 *   exit_status  main calls exit(3) after its threads ran: the job ends with 3
 *   return_status  main returns 4
 *   thread_exit  a thread calls exit(5): the job ends with a message
 *   private_ptr  a thread on another rank follows a pointer to rank 0's
 *                private memory (getenv's string, on rank 0's process
 *                stack, which ASLR places elsewhere on other ranks): a hint
 *                names the address
 *   chdir_gone   main changes to a directory and removes it, then starts a
 *                thread on another rank, which cannot follow it there: the
 *                job ends with a message naming the directory and the rank
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <agora/agora.h>

static volatile long sink;
const char *private_string;

static long recurse(long n)
{
    volatile char frame[1024];
    frame[0] = (char)n;
    if (n == 0) return frame[0];
    return recurse(n - 1) + frame[0];
}

static void *overflow_thread(void *arg)
{
    sink = recurse((long)(intptr_t)arg);
    return NULL;
}

static void *quick(void *arg) { return arg; }

static void *exiting_thread(void *arg)
{
    (void)arg;
    exit(5);
}

static void *private_reader(void *arg)
{
    (void)arg;
    sink = private_string[0]; /* rank 0's environment: not mapped, or not this */
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    agora_thread_t t;
    int last = agora_nranks() - 1;
    if (!strcmp(mode, "overflow")) {
        agora_thread_create_on(&t, last, overflow_thread, (void *)(intptr_t)1000000);
        agora_thread_join(t, NULL);
    } else if (!strcmp(mode, "main_overflow")) {
        sink = recurse(1000000);
    } else if (!strcmp(mode, "exit_status")) {
        agora_thread_create_on(&t, last, quick, NULL);
        agora_thread_join(t, NULL);
        exit(3);
    } else if (!strcmp(mode, "return_status")) {
        agora_thread_create_on(&t, last, quick, NULL);
        agora_thread_join(t, NULL);
        return 4;
    } else if (!strcmp(mode, "thread_exit")) {
        agora_thread_create_on(&t, last, exiting_thread, NULL);
        agora_thread_join(t, NULL);
    } else if (!strcmp(mode, "private_ptr")) {
        private_string = getenv("PATH"); /* a string in rank 0's own memory */
        agora_thread_create_on(&t, last, private_reader, NULL);
        agora_thread_join(t, NULL);
    } else if (!strcmp(mode, "chdir_gone")) {
        char dir[] = "/tmp/agora_misuse_XXXXXX";
        if (!mkdtemp(dir) || chdir(dir) != 0 || rmdir(dir) != 0) return 2;
        agora_thread_create_on(&t, last, quick, NULL);
        agora_thread_join(t, NULL);
    }
    printf("main done\n");
    return 0;
}
