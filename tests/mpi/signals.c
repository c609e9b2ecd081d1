/* The application's own signals next to Agora's:
 *   signals segv          SIGSEGV handlers the program installs after agora_init
 *                         chain behind Agora's (sigaction, signal, SA_RESETHAND,
 *                         SIG_IGN, sent SIGSEGV); global memory keeps working;
 *                         after agora_finalize the program's handler is the kernel's.
 *   signals segv-default  signal(SIGSEGV, SIG_DFL) then a wild write: must die
 *   signals segv-ignored  signal(SIGSEGV, SIG_IGN) then a wild write: must die
 *   signals segv-blocked  the program blocks SIGSEGV (sigprocmask, then
 *                         pthread_sigmask with a full set) and the ranks
 *                         exchange pages: Agora's faults still work, and the
 *                         mask the program reads back leaves SIGSEGV out.
 *   signals flood SIG N   a thread sends the process N SIGURGs and N signals SIG
 *                         (a number, or "auto" = SIGRTMIN+5, the default doorbell)
 *                         one by one while the ranks exchange pages and locks;
 *                         every one must reach the program's handler.
 *   signals blocked SIG N every thread blocks SIG (the doorbell's number); the
 *                         process sends itself N, so only the service thread's
 *                         wait can take them; after unblocking, all N must
 *                         reach the handler (the doorbell handed them back). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

int signals_lib_install(void (*fn)(int, siginfo_t *, void *), struct sigaction *old); /* signals_lib.c */

#define PAGE 4096

static int me = -1;
/* CHECK needs the runtime for the rank; after finalize use this one. */
#define CHECK_AFTER(cond, ...)                                                                                         \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "rank %d: check failed at %s:%d: %s: ", me, __FILE__, __LINE__, #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* ---- segv ------------------------------------------------------------------ */

static char *volatile trap; /* a private page the handlers open after a fault */
static volatile sig_atomic_t info_count, plain_count, jump_count, sent_count;
static void *volatile info_addr;
static volatile int sent_code;
static sigjmp_buf jump_back;

static void open_trap(void) { mprotect(trap, PAGE, PROT_READ | PROT_WRITE); }
static void close_trap(void) { mprotect(trap, PAGE, PROT_NONE); }
static void on_info(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)ctx;
    info_count++;
    info_addr = si->si_addr;
    open_trap();
}
static void on_plain(int sig)
{
    (void)sig;
    plain_count++;
    open_trap();
}
static void on_jump(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)si, (void)ctx;
    jump_count++;
    siglongjmp(jump_back, 1);
}
static void on_sent(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)ctx;
    sent_code = si->si_code;
    sent_count++;
}

static void install(void (*fn)(int, siginfo_t *, void *), int flags, struct sigaction *old)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = fn;
    a.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&a.sa_mask);
    CHECK(sigaction(SIGSEGV, &a, old) == 0, "sigaction failed");
}

/* Every rank writes its own page, then reads every other rank's (remote faults). */
static void exchange(int *g, int round)
{
    int n = agora_nranks();
    for (int i = 0; i < PAGE / 4; i++)
        g[me * (PAGE / 4) + i] = round * 1000 + me;
    agora_barrier();
    for (int r = 0; r < n; r++)
        for (int i = 0; i < PAGE / 4; i += 97)
            CHECK(g[r * (PAGE / 4) + i] == round * 1000 + r, "round %d: page of rank %d reads %d", round, r,
                  g[r * (PAGE / 4) + i]);
    agora_barrier();
}

static void wait_for(volatile sig_atomic_t *count, int value)
{
    for (int spins = 0; *count < value && spins < 2000000; spins++)
        sched_yield();
}

static int segv_dies(sighandler_t action);
static int segv(void)
{
    int n = agora_nranks();
    int *g = test_alloc((size_t)n * PAGE);
    trap = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(trap != MAP_FAILED, "mmap");

    /* Agora is invisible: the action the program finds is not in this
     * executable (Agora is linked into it), i.e. MPI's or the default. */
    struct sigaction before, old;
    CHECK(sigaction(SIGSEGV, NULL, &before) == 0, "query");
    void *h = (before.sa_flags & SA_SIGINFO) ? (void *)before.sa_sigaction : (void *)before.sa_handler;
    Dl_info in_h, in_main;
    CHECK(dladdr((void *)segv_dies, &in_main), "dladdr(segv_dies)");
    CHECK(h == (void *)SIG_DFL || !dladdr(h, &in_h) || strcmp(in_h.dli_fname, in_main.dli_fname) != 0,
          "sigaction reports a handler in the executable (Agora's?) at %p", h);

    install(on_info, 0, &old);
    CHECK(old.sa_flags == before.sa_flags && old.sa_handler == before.sa_handler,
          "old action is not the program's previous one");
    exchange(g, 1);

    /* A fault that is not Agora's reaches the program's handler, which
     * repairs it and returns: the access is retried. */
    trap[0] = 7;
    CHECK(info_count == 1 && info_addr == trap && trap[0] == 7, "count %d addr %p (page %p) value %d", info_count,
          info_addr, (void *)trap, trap[0]);

    /* Global memory no allocation covers is not Agora's either. */
    install(on_jump, 0, NULL);
    if (!sigsetjmp(jump_back, 1)) {
        *(volatile int *)((char *)g + (size_t)(n + 64) * PAGE) = 1;
        CHECK(0, "a write to unallocated global memory went through");
    }
    CHECK(jump_count == 1, "jump handler ran %d times", jump_count);

    /* signal(): returns the previous handler, installs a plain one. */
    sighandler_t prev = signal(SIGSEGV, on_plain);
    CHECK(prev == (sighandler_t)(void *)on_jump, "signal returned %p", (void *)prev);
    close_trap();
    trap[1] = 8;
    CHECK(plain_count == 1 && trap[1] == 8, "plain handler ran %d times", plain_count);
    struct sigaction now;
    sigaction(SIGSEGV, NULL, &now);
    CHECK(now.sa_handler == on_plain && !(now.sa_flags & SA_SIGINFO), "query after signal()");

    /* SA_RESETHAND: one shot, then the default action. */
    install(on_info, SA_RESETHAND, NULL);
    close_trap();
    trap[2] = 9;
    CHECK(info_count == 2, "one-shot handler ran %d times", info_count);
    sigaction(SIGSEGV, NULL, &now);
    CHECK(now.sa_handler == SIG_DFL, "SA_RESETHAND did not reset the action");

    /* A SIGSEGV sent (not a fault): ignored when the program says so, and
     * seen as sent by its handler. */
    CHECK(signal(SIGSEGV, SIG_IGN) == SIG_DFL, "signal(SIG_IGN) returned the wrong action");
    raise(SIGSEGV);
    install(on_sent, 0, NULL);
    kill(getpid(), SIGSEGV);
    wait_for(&sent_count, 1);
    CHECK(sent_count == 1 && sent_code == SI_USER, "sent SIGSEGV: count %d code %d", sent_count, sent_code);

    /* sysv_signal(): one shot. */
    CHECK(sysv_signal(SIGSEGV, on_plain) == (sighandler_t)(void *)on_sent, "sysv_signal returned the wrong action");
    close_trap();
    trap[4] = 5;
    CHECK(plain_count == 2 && trap[4] == 5, "sysv handler ran %d times", plain_count);
    sigaction(SIGSEGV, NULL, &now);
    CHECK(now.sa_handler == SIG_DFL, "sysv_signal handler was not one-shot");

    /* A shared library's sigaction is interposed as well. */
    CHECK(signals_lib_install(on_info, &old) == 0 && old.sa_handler == SIG_DFL, "library sigaction");
    exchange(g, 2);
    close_trap();
    trap[5] = 6;
    CHECK(info_count == 3 && trap[5] == 6, "library-installed handler ran %d times", info_count - 2);
    agora_finalize();

    /* The program's handler is now the kernel's: a fault reaches it directly. */
    CHECK_AFTER(sigaction(SIGSEGV, NULL, &now) == 0 && now.sa_sigaction == on_info, "after finalize");
    close_trap();
    trap[3] = 1;
    CHECK_AFTER(info_count == 4, "handler after finalize ran %d times", info_count);
    if (me == 0) printf("PASS signals segv on %d ranks\n", n);
    return 0;
}

static int segv_dies(sighandler_t action)
{
    agora_barrier();
    signal(SIGSEGV, action);
    volatile uintptr_t wild = 16;
    if (me == 0) *(volatile int *)wild = 1;
    agora_barrier();
    agora_finalize();
    return 0;
}

/* ---- flood ------------------------------------------------------------------- */

static atomic_long urg_seen, other_seen;
static atomic_int sender_done;
static int segv_blocked(void)
{
    int n = agora_nranks();
    int *g = test_alloc((size_t)n * PAGE);
    sigset_t set, now;
    sigemptyset(&set);
    sigaddset(&set, SIGSEGV);
    CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0, "sigprocmask");
    exchange(g, 1);
    sigfillset(&set);
    CHECK(pthread_sigmask(SIG_SETMASK, &set, &now) == 0, "pthread_sigmask");
    exchange(g, 2);
    CHECK(pthread_sigmask(SIG_SETMASK, &now, &set) == 0, "pthread_sigmask");
    CHECK(!sigismember(&set, SIGSEGV) && sigismember(&set, SIGUSR1), "SIGSEGV blocked (%d) or SIGUSR1 not (%d)",
          sigismember(&set, SIGSEGV), sigismember(&set, SIGUSR1));
    PASS("signals segv-blocked");
    agora_finalize();
    return 0;
}

static int other_sig, per_signal;
static long lost_urg, lost_other;

static void on_urg(int sig)
{
    (void)sig;
    atomic_fetch_add(&urg_seen, 1);
}
static void on_other(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)si, (void)ctx;
    atomic_fetch_add(&other_seen, 1);
}

/* One signal at a time (SIGURG does not queue), waiting up to 2 s for its handler. */
static long send_and_wait(int sig, atomic_long *seen, long expect)
{
    kill(getpid(), sig);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(seen) < expect) {
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 2000000000L) {
            atomic_fetch_add(seen, 1); /* count it lost and go on */
            return 1;
        }
    }
    return 0;
}

static void *sender(void *arg)
{
    (void)arg;
    for (long i = 1; i <= per_signal; i++) {
        lost_urg += send_and_wait(SIGURG, &urg_seen, i);
        lost_other += send_and_wait(other_sig, &other_seen, i);
    }
    atomic_store(&sender_done, 1);
    return NULL;
}

static int flood(const char *sig, int count)
{
    other_sig = strcmp(sig, "auto") ? atoi(sig) : SIGRTMIN + 5;
    per_signal = count;
    int n = agora_nranks();
    int *g = test_alloc((size_t)n * PAGE);
    int64_t *counter = test_alloc(sizeof *counter);
    agora_lock_t *lock = test_lock_create();

    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = on_urg;
    a.sa_flags = SA_RESTART;
    sigemptyset(&a.sa_mask);
    CHECK(sigaction(SIGURG, &a, NULL) == 0, "sigaction(SIGURG)");
    a.sa_sigaction = on_other;
    a.sa_flags = SA_RESTART | SA_SIGINFO;
    CHECK(sigaction(other_sig, &a, NULL) == 0, "sigaction(%d)", other_sig);
    agora_barrier();

    pthread_t t;
    CHECK(pthread_create(&t, NULL, sender, NULL) == 0, "pthread_create");
    int64_t rounds = 0;
    for (;;) {
        agora_lock(lock);
        *counter += 1;
        agora_unlock(lock);
        for (int i = 0; i < PAGE / 4; i += 64)
            g[me * (PAGE / 4) + i] = (int)rounds;
        agora_barrier();
        int other = (me + 1) % n;
        CHECK(g[other * (PAGE / 4)] == (int)rounds, "round %lld: rank %d's page reads %d", (long long)rounds, other,
              g[other * (PAGE / 4)]);
        rounds++;
        int64_t done = atomic_load(&sender_done);
        agora_reduce(&done, 1, AGORA_INT64, AGORA_MIN);
        if (done) break;
    }
    pthread_join(t, NULL);
    agora_barrier();
    CHECK(*counter == rounds * n, "lock counter %lld, expected %lld", (long long)*counter, (long long)(rounds * n));
    printf("rank %d: %lld rounds; SIGURG %ld/%d (lost %ld), signal %d %ld/%d (lost %ld)\n", me, (long long)rounds,
           atomic_load(&urg_seen) - lost_urg, count, lost_urg, other_sig, atomic_load(&other_seen) - lost_other, count,
           lost_other);
    CHECK(lost_urg == 0 && lost_other == 0 && atomic_load(&urg_seen) == count && atomic_load(&other_seen) == count,
          "signals lost: SIGURG %ld, signal %d %ld", lost_urg, other_sig, lost_other);
    PASS("signals flood");
    agora_finalize();
    return 0;
}

/* Every signal SIG was blocked before agora_init (so in every thread). */
static int blocked(int sig, int count)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = on_other;
    a.sa_flags = SA_RESTART | SA_SIGINFO;
    sigemptyset(&a.sa_mask);
    CHECK(sigaction(sig, &a, NULL) == 0, "sigaction(%d)", sig);
    int n = agora_nranks();
    int *g = test_alloc((size_t)n * PAGE);
    for (int i = 0; i < count; i++)
        CHECK(kill(getpid(), sig) == 0, "kill");
    /* Rounds with naps: the idle service threads take what is pending. */
    for (int round = 0; round < 100; round++) {
        g[me * (PAGE / 4)] = round;
        agora_barrier();
        CHECK(g[((me + 1) % n) * (PAGE / 4)] == round, "round %d", round);
        agora_barrier();
        usleep(2000);
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    for (int spins = 0; atomic_load(&other_seen) < count && spins < 1000000; spins++)
        sched_yield();
    printf("rank %d: signal %d %ld/%d\n", me, sig, atomic_load(&other_seen), count);
    CHECK(atomic_load(&other_seen) == count, "signal %d: %ld of %d reached the handler", sig, atomic_load(&other_seen),
          count);
    PASS("signals blocked");
    agora_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 3 && !strcmp(argv[1], "blocked")) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, atoi(argv[2]));
        pthread_sigmask(SIG_BLOCK, &set, NULL);
    }
    agora_init(&argc, &argv);
    me = agora_rank();
    const char *mode = argc > 1 ? argv[1] : "segv";
    if (!strcmp(mode, "segv")) return segv();
    if (!strcmp(mode, "segv-default")) return segv_dies(SIG_DFL);
    if (!strcmp(mode, "segv-ignored")) return segv_dies(SIG_IGN);
    if (!strcmp(mode, "segv-blocked")) return segv_blocked();
    if (!strcmp(mode, "flood") && argc > 3) return flood(argv[2], atoi(argv[3]));
    if (!strcmp(mode, "blocked") && argc > 3) return blocked(atoi(argv[2]), atoi(argv[3]));
    CHECK(0, "usage: signals segv|segv-default|segv-ignored|segv-blocked|flood SIG|auto N|blocked SIG N");
    return 1;
}
