/* Program mode: endings and misuse, one per mode (argv[1]).
 *   overflow     a thread on the last rank recurses past its stack: the
 *                guard page stops it with "stack overflow" (never corruption)
 *   main_overflow  main does the same
 *   exit_status  main calls exit(3) after its threads ran: the job ends with 3
 *   return_status  main returns 4
 *   thread_exit  a thread calls exit(5): the job ends with status 5
 *   sigmask      main and a thread on the last rank block every signal,
 *                SIGSEGV included, then share a global: Agora's faults
 *                still work (the rank died silently)
 *   handles      the pthread calls that take a thread handle: on main's
 *                own handle they act on its OS thread; on a thread of
 *                rank 1 each returns ENOTSUP with a message (they crashed)
 *   fork         main, then a thread on the last rank, call fork(): each
 *                child works on private copies of the globals, its stack
 *                and the heap its rank held, exits with its own status
 *                (not the job's end); a child that touches a page its rank
 *                did not hold dies with a message; the job's memory is
 *                unchanged
 *   private_ptr  a thread on another rank follows a pointer to rank 0's
 *                private memory (a 1 MiB string libc's own malloc made for
 *                asprintf on rank 0: memory libc maps for itself, which
 *                the other rank does not have): a hint names the address.
 *                (getenv's string no longer serves: every rank runs with
 *                one address layout, so the other rank reads its own
 *                environment there, silently.)
 *   chdir_gone   main changes to a directory and removes it, then starts a
 *                thread on another rank, which cannot follow it there: the
 *                job ends with a message naming the directory and the rank
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

static volatile long shared_value; /* homed on rank 0 */

static void *masked_thread(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    shared_value += 41;
    return NULL;
}

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;

static void *gated_thread(void *arg)
{
    pthread_mutex_lock(&gate); /* held by main until it is done with the handle */
    pthread_mutex_unlock(&gate);
    return arg;
}

#define EXPECT(call, want)                                                                                             \
    do {                                                                                                               \
        int r_ = (call);                                                                                               \
        if (r_ != (want)) {                                                                                            \
            printf("%s returned %d, expected %d\n", #call, r_, (int)(want));                                           \
            bad = 1;                                                                                                   \
        }                                                                                                              \
    } while (0)

static int handles(void)
{
    int bad = 0;
    pthread_t self = pthread_self(), w;
    char name[32] = "";
    cpu_set_t cpus;
    struct sched_param sp;
    int policy = 0;
    clockid_t clock;
    void *ret = NULL;
    struct timespec now = {0, 0};
    pthread_attr_t attr;
    union sigval value = {0};
    EXPECT(pthread_setname_np(self, "agora-main"), 0);
    EXPECT(pthread_getname_np(self, name, sizeof name), 0);
    EXPECT(strcmp(name, "agora-main"), 0);
    EXPECT(pthread_kill(self, 0), 0);
    EXPECT(pthread_getaffinity_np(self, sizeof cpus, &cpus), 0);
    EXPECT(pthread_getschedparam(self, &policy, &sp), 0);
    EXPECT(pthread_getcpuclockid(self, &clock), 0);
    EXPECT(pthread_getattr_np(self, &attr), ENOTSUP);
    pthread_mutex_lock(&gate);
    EXPECT(pthread_create(&w, NULL, gated_thread, (void *)7), 0);
    EXPECT(pthread_cancel(w), ENOTSUP);
    EXPECT(pthread_kill(w, 0), ENOTSUP);
    EXPECT(pthread_sigqueue(w, SIGUSR1, value), ENOTSUP);
    EXPECT(pthread_setname_np(w, "worker"), ENOTSUP);
    EXPECT(pthread_getname_np(w, name, sizeof name), ENOTSUP);
    EXPECT(pthread_tryjoin_np(w, &ret), ENOTSUP);
    EXPECT(pthread_timedjoin_np(w, &ret, &now), ENOTSUP);
    EXPECT(pthread_getattr_np(w, &attr), ENOTSUP);
    EXPECT(pthread_setaffinity_np(w, sizeof cpus, &cpus), ENOTSUP);
    EXPECT(pthread_getaffinity_np(w, sizeof cpus, &cpus), ENOTSUP);
    EXPECT(pthread_setschedparam(w, policy, &sp), ENOTSUP);
    EXPECT(pthread_getschedparam(w, &policy, &sp), ENOTSUP);
    EXPECT(pthread_setschedprio(w, 0), ENOTSUP);
    EXPECT(pthread_getcpuclockid(w, &clock), ENOTSUP);
    pthread_mutex_unlock(&gate);
    EXPECT(pthread_join(w, &ret), 0);
    EXPECT((int)(intptr_t)ret, 7);
    printf("handles: %s\n", bad ? "FAILED" : "ok");
    return bad;
}

long fork_global = 5;    /* .data: global memory homed on rank 0 */
char untouched[1 << 16]; /* .bss, never read by the last rank */

/* fork() here; the child changes its copies and exits with 0 if it saw the
 * parent's values. Returns the child's wait status. */
static int fork_and_check(const char *who)
{
    int local = 7;
    char *heap = malloc(64);
    strcpy(heap, "heap");
    pid_t pid = fork();
    if (pid == 0) {
        int ok = fork_global == 5 && local == 7 && strcmp(heap, "heap") == 0;
        fork_global = 99;
        local = 8;
        heap[0] = 'H';
        char *mine = malloc(32); /* the child's own heap is libc's */
        strcpy(mine, "child");
        free(mine);
        free(heap);
        printf("%s's child: global %ld local %d\n", who, fork_global, local);
        exit(ok && local == 8 ? 0 : 1);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    if (strcmp(heap, "heap") != 0) status = -2;
    free(heap);
    return status;
}

static void *forking_thread(void *arg)
{
    (void)arg;
    long seen = fork_global; /* this rank now holds the page of fork_global */
    int status = fork_and_check("thread");
    pid_t pid = fork();
    if (pid == 0) {
        _exit(untouched[40000]); /* not on this rank at the fork: a message, then death */
    }
    int untouched_status = -1;
    waitpid(pid, &untouched_status, 0);
    int died = WIFSIGNALED(untouched_status) && WTERMSIG(untouched_status) == SIGSEGV;
    return (void *)(intptr_t)(seen == 5 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && died ? 1 : 0);
}

static void *private_reader(void *arg)
{
    (void)arg;
    sink = private_string[0]; /* memory libc mapped on rank 0 only */
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
    } else if (!strcmp(mode, "sigmask")) {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
        agora_thread_create_on(&t, last, masked_thread, NULL);
        agora_thread_join(t, NULL);
        printf("sigmask: %ld\n", shared_value);
    } else if (!strcmp(mode, "handles")) {
        if (handles()) return 1;
    } else if (!strcmp(mode, "fork")) {
        int status = fork_and_check("main");
        void *ok = NULL;
        agora_thread_create_on(&t, last, forking_thread, NULL);
        agora_thread_join(t, &ok);
        printf("fork: main's child %s, thread's children %s, global %ld\n",
               WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "FAILED", ok ? "ok" : "FAILED", fork_global);
    } else if (!strcmp(mode, "private_ptr")) {
        char *big = NULL; /* libc's malloc, not the program's: rank 0's own memory */
        if (asprintf(&big, "%*s", 1 << 20, "x") < 0) return 1;
        private_string = big;
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
