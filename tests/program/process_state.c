/* libc state a pthreads program treats as process-wide, in program mode
 * (issue 26): the random generators (rand/random and their seeds,
 * initstate/setstate, the drand48 family and lcong48's parameters) and
 * strtok's position are one state for the whole job, as in one process; the
 * environment, the current directory, the umask and the locale changed by
 * one thread hold for every thread that synchronises with it afterwards.
 *
 * Every phase runs two workers, one on each rank (2 ranks, 1 thread per
 * rank). The random phases check the exact values: main computes what one
 * process would draw with the same seeds, on private states through glibc's
 * reentrant _r functions, and the draws of main and of the workers on both
 * ranks must be that sequence (in the order a semaphore imposes) or, for
 * concurrent draws, that multiset. The attribute phases check them through
 * calls Agora does not wrap too (open of a relative path, the mode of a new
 * file, MB_CUR_MAX). Any mismatch exits 1.
 *
 * process_state            the checks
 * process_state bench N    N rand() calls by main, then by a worker on
 *                          rank 1, then by both workers at once: prints
 *                          calls per second */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "worker_pair.h"

#define K 40 /* draws per worker and per family */

static sem_t turn; /* worker 1 waits for worker 0's post in ordered phases */

/* Worker 0 first, then worker 1: `ordered(id, body)`. */
static void wait_turn(long id)
{
    if (id == 1) sem_wait(&turn);
}
static void end_turn(long id)
{
    if (id == 0) sem_post(&turn);
}

/* ---- the expected values: one process's private generators ----------------- */
static struct random_data ref_random;
static int32_t ref_table[32]; /* glibc's default state: TYPE_3, 128 bytes */
static struct drand48_data ref_48;

static long ref_rand(void)
{
    int32_t v;
    random_r(&ref_random, &v);
    return v;
}

/* What the workers and main drew. */
static long got_rand[3][K], got_random[2][K];
static double got_drand[3][K];
static long got_lrand[3][K], got_mrand[3][K];

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* ---- unseeded: glibc's defaults, one sequence for the job ------------------ */
static void *unseeded(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    wait_turn(id);
    for (int i = 0; i < K; ++i) {
        got_rand[id][i] = rand();
        got_drand[id][i] = drand48();
    }
    end_turn(id);
    return NULL;
}

/* ---- seeded by main: srand, srand48 --------------------------------------------- */
static void *seeded(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    wait_turn(id);
    for (int i = 0; i < K; ++i) {
        got_rand[id][i] = rand();
        got_drand[id][i] = drand48();
        got_lrand[id][i] = lrand48();
        got_mrand[id][i] = mrand48();
    }
    end_turn(id);
    return NULL;
}

/* ---- concurrent random(): the two workers' draws are the next 2K values ---- */
static void *concurrent(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    for (int i = 0; i < K; ++i)
        got_random[id][i] = random();
    return NULL;
}

/* ---- initstate/setstate: a state array of the program's ------------------- */
static char program_state[64]; /* TYPE_2 */
static void *own_state(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    wait_turn(id);
    for (int i = 0; i < K; ++i)
        got_random[id][i] = random();
    end_turn(id);
    return NULL;
}

/* ---- lcong48's parameters drive erand48/nrand48/jrand48 everywhere ---------- */
static unsigned short lcong_param[7] = {0x1234, 0x5678, 0x9abc, 0x3c6d, 0x4e17, 0x0005, 0x0029};
static unsigned short xsubi_start[3] = {0x0102, 0x0304, 0x0506};
static double want_erand[K];
static long want_nrand[K], want_jrand[K];
static void *lcong(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    unsigned short x[3], y[3], z[3];
    memcpy(x, xsubi_start, sizeof x);
    memcpy(y, xsubi_start, sizeof y);
    memcpy(z, xsubi_start, sizeof z);
    for (int i = 0; i < K; ++i) {
        double e = erand48(x);
        long n = nrand48(y), j = jrand48(z);
        CHECK(e == want_erand[i] && n == want_nrand[i] && j == want_jrand[i],
              "lcong48: worker %ld draw %d: erand48 %.17g nrand48 %ld jrand48 %ld, want %.17g %ld %ld", id, i, e, n, j,
              want_erand[i], want_nrand[i], want_jrand[i]);
    }
    return NULL;
}

/* ---- strtok: main starts, the workers and main continue one scan ---------- */
static char text[] = "t0,t1,t2,t3,t4,t5";
static const char *got_token[2];
static void *tokens(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    wait_turn(id);
    got_token[id] = strtok(NULL, ",");
    end_turn(id);
    return NULL;
}

/* ---- the environment: main's changes, then worker 0's, seen by worker 1 ---- */
static char put_string[] = "AGORA_PS_PUT=put-by-main";
static void *environment(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    const char *a, *put, *gone = getenv("AGORA_PS_GONE");
    CHECK(!gone, "environment: worker %ld: AGORA_PS_GONE is %s, want unset (main unset it)", id, gone);
    wait_turn(id);
    if (id == 0) {
        a = getenv("AGORA_PS_A");
        put = getenv("AGORA_PS_PUT");
        CHECK(a && strcmp(a, "main") == 0, "environment: worker 0: AGORA_PS_A is %s, want main", a ? a : "unset");
        CHECK(put && strcmp(put, "put-by-main") == 0, "environment: worker 0: AGORA_PS_PUT is %s, want put-by-main",
              put ? put : "unset");
        CHECK(setenv("AGORA_PS_A", "not-overwritten", 0) == 0, "setenv failed");
        CHECK(setenv("AGORA_PS_W0", "worker0", 1) == 0, "setenv failed");
        CHECK(unsetenv("AGORA_PS_PUT") == 0, "unsetenv failed");
    } else {
        const char *w0 = getenv("AGORA_PS_W0");
        a = getenv("AGORA_PS_A");
        put = getenv("AGORA_PS_PUT");
        CHECK(w0 && strcmp(w0, "worker0") == 0,
              "environment: worker 1: AGORA_PS_W0 is %s, want worker0 (worker 0 set it)", w0 ? w0 : "unset");
        CHECK(a && strcmp(a, "main") == 0,
              "environment: worker 1: AGORA_PS_A is %s, want main (setenv without overwrite)", a ? a : "unset");
        CHECK(!put, "environment: worker 1: AGORA_PS_PUT is %s, want unset (worker 0 unset it)", put);
    }
    end_turn(id);
    return NULL;
}

/* ---- directory and umask: main's, then worker 0's, seen by worker 1 --------- */
static char dir[] = "/tmp/agora_process_state_XXXXXX";
static char sub[sizeof dir + 8];
static mode_t new_file_mode(const char *path)
{
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0666);
    struct stat st;
    mode_t mode = fd >= 0 && fstat(fd, &st) == 0 ? st.st_mode & 0777 : (mode_t)-1;
    if (fd >= 0) close(fd);
    unlink(path);
    return mode;
}
static void *directory(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    char cwd[4096];
    wait_turn(id);
    if (id == 0) {
        /* No wrapped call before these: the thread's start brought them. */
        CHECK(access("marker", F_OK) == 0, "directory: worker 0: no ./marker (main made it in %s)", dir);
        mode_t mode = new_file_mode("w0");
        CHECK(mode == 0640, "umask: worker 0: a new file has mode %o, want 640 (main's umask 027)", (unsigned)mode);
        CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, dir) == 0, "directory: worker 0: cwd %s, want %s", cwd, dir);
        CHECK(chdir("sub") == 0, "chdir(sub) failed");
        umask(077);
    } else {
        /* No wrapped call before these: the semaphore wait brought them. */
        CHECK(access("in_sub", F_OK) == 0, "directory: worker 1: no ./in_sub (worker 0 went to %s)", sub);
        mode_t mode = new_file_mode("w1");
        CHECK(mode == 0600, "umask: worker 1: a new file has mode %o, want 600 (worker 0's umask 077)", (unsigned)mode);
        CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, sub) == 0, "directory: worker 1: cwd %s, want %s", cwd, sub);
    }
    end_turn(id);
    return NULL;
}

/* ---- the locale: main's setlocale, seen by both workers ----------------- */
static char main_locale[256];
static void *locale(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    CHECK(MB_CUR_MAX > 1, "locale: worker %ld: MB_CUR_MAX is %zu, want a UTF-8 locale's", id, (size_t)MB_CUR_MAX);
    const char *now = setlocale(LC_ALL, NULL);
    CHECK(now && strcmp(now, main_locale) == 0, "locale: worker %ld: %s, want %s", id, now ? now : "NULL", main_locale);
    return NULL;
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot create %s", path);
    if (f) fclose(f);
}

static void check_attributes(void)
{
    /* strtok: main takes the first token, the workers the next two, main the rest. */
    CHECK(strcmp(strtok(text, ","), "t0") == 0, "strtok: first token");
    run_pair("strtok", tokens);
    for (int w = 0; w < 2; ++w) {
        char want[3] = {'t', (char)('1' + w), 0};
        CHECK(got_token[w] && strcmp(got_token[w], want) == 0, "strtok: worker %d got %s, want %s", w,
              got_token[w] ? got_token[w] : "NULL", want);
    }
    const char *next = strtok(NULL, ",");
    CHECK(next && strcmp(next, "t3") == 0, "strtok: main after the workers got %s, want t3", next ? next : "NULL");

    /* The environment. */
    CHECK(setenv("AGORA_PS_GONE", "x", 1) == 0 && unsetenv("AGORA_PS_GONE") == 0, "setenv/unsetenv failed");
    CHECK(setenv("AGORA_PS_A", "main", 1) == 0, "setenv failed");
    CHECK(putenv(put_string) == 0, "putenv failed");
    run_pair("environment", environment);
    const char *w0 = getenv("AGORA_PS_W0");
    CHECK(w0 && strcmp(w0, "worker0") == 0, "environment: main: AGORA_PS_W0 is %s, want worker0", w0 ? w0 : "unset");
    CHECK(!getenv("AGORA_PS_PUT"), "environment: main: AGORA_PS_PUT is still set (worker 0 unset it)");

    /* The directory and the umask. */
    char start[4096];
    int start_fd = open(".", O_RDONLY | O_DIRECTORY);
    CHECK(getcwd(start, sizeof start) != NULL && start_fd >= 0, "cannot read the start directory");
    CHECK(mkdtemp(dir) != NULL, "mkdtemp failed: %s", strerror(errno));
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkdir(sub, 0700) == 0, "mkdir %s failed", sub);
    CHECK(chdir(dir) == 0, "chdir %s failed", dir);
    touch("marker");
    touch("sub/in_sub");
    mode_t old_mask = umask(027);
    run_pair("directory and umask", directory);
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, sub) == 0, "directory: main: cwd %s, want %s (worker 0's chdir)", cwd,
          sub);
    CHECK(fchdir(start_fd) == 0, "fchdir failed");
    umask(old_mask);
    unlink("marker"); /* relative to start: nothing there */
    char path[sizeof sub + 16];
    snprintf(path, sizeof path, "%s/in_sub", sub);
    unlink(path);
    snprintf(path, sizeof path, "%s/marker", dir);
    unlink(path);
    rmdir(sub);
    rmdir(dir);
    close(start_fd);

    /* The locale, and fchdir's directory seen by the workers. */
    const char *set = setlocale(LC_ALL, "C.UTF-8");
    CHECK(set != NULL, "setlocale(LC_ALL, C.UTF-8) failed");
    snprintf(main_locale, sizeof main_locale, "%s", set ? set : "?");
    run_pair("locale", locale);
    setlocale(LC_ALL, "C");
}

static int run_checks(void)
{
    /* Unseeded: glibc's defaults (rand as after srand(1), drand48's x = 0). */
    initstate_r(1, (char *)ref_table, sizeof ref_table, &ref_random);
    memset(&ref_48, 0, sizeof ref_48);
    run_pair("unseeded", unseeded);
    for (int w = 0; w < 2; ++w)
        for (int i = 0; i < K; ++i) {
            long want = ref_rand();
            double d;
            drand48_r(&ref_48, &d);
            CHECK(got_rand[w][i] == want && got_drand[w][i] == d,
                  "unseeded: worker %d draw %d: rand %ld drand48 %.17g, want %ld %.17g", w, i, got_rand[w][i],
                  got_drand[w][i], want, d);
        }

    /* Seeded by main: worker 0, worker 1, then main continue one sequence. */
    srand(4242);
    srand48(777);
    srandom_r(4242, &ref_random);
    srand48_r(777, &ref_48);
    run_pair("seeded by main", seeded);
    for (int i = 0; i < K; ++i) {
        got_rand[2][i] = rand();
        got_drand[2][i] = drand48();
        got_lrand[2][i] = lrand48();
        got_mrand[2][i] = mrand48();
    }
    for (int w = 0; w < 3; ++w)
        for (int i = 0; i < K; ++i) {
            long want = ref_rand(), l, m;
            double d;
            drand48_r(&ref_48, &d);
            lrand48_r(&ref_48, &l);
            mrand48_r(&ref_48, &m);
            CHECK(got_rand[w][i] == want && got_drand[w][i] == d && got_lrand[w][i] == l && got_mrand[w][i] == m,
                  "seeded: %s %d draw %d: rand %ld drand48 %.17g lrand48 %ld mrand48 %ld, want %ld %.17g %ld %ld",
                  w < 2 ? "worker" : "main", w, i, got_rand[w][i], got_drand[w][i], got_lrand[w][i], got_mrand[w][i],
                  want, d, l, m);
        }

    /* srandom, then the two workers at once: rand and random share one state. */
    srandom(99);
    srandom_r(99, &ref_random);
    run_pair("concurrent random", concurrent);
    long drawn[2 * K], want[2 * K];
    memcpy(drawn, got_random[0], sizeof got_random[0]);
    memcpy(drawn + K, got_random[1], sizeof got_random[1]);
    for (int i = 0; i < 2 * K; ++i)
        want[i] = ref_rand();
    qsort(drawn, 2 * K, sizeof drawn[0], cmp_long);
    qsort(want, 2 * K, sizeof want[0], cmp_long);
    int same = memcmp(drawn, want, sizeof drawn) == 0;
    CHECK(same, "concurrent random(): the workers' %d draws are not the next %d values of srandom(99)", 2 * K, 2 * K);
    long after = rand(), after_want = ref_rand();
    CHECK(after == after_want, "rand() after the concurrent draws: %ld, want %ld", after, after_want);

    /* initstate with the program's array, then setstate back. */
    char ref_own[64];
    struct random_data ref_own_random = {0};
    initstate_r(5, ref_own, sizeof ref_own, &ref_own_random);
    char *old = initstate(5, program_state, sizeof program_state);
    CHECK(old != NULL, "initstate returned NULL");
    run_pair("initstate", own_state);
    for (int w = 0; w < 2; ++w)
        for (int i = 0; i < K; ++i) {
            int32_t v;
            random_r(&ref_own_random, &v);
            CHECK(got_random[w][i] == v, "initstate: worker %d draw %d: random %ld, want %ld", w, i, got_random[w][i],
                  (long)v);
        }
    CHECK(setstate(old) == program_state, "setstate did not return the program's array");
    after = random();
    after_want = ref_rand();
    CHECK(after == after_want, "random() after setstate back: %ld, want %ld", after, after_want);

    /* lcong48 in main: the workers' erand48/nrand48/jrand48 use its parameters. */
    lcong48(lcong_param);
    lcong48_r(lcong_param, &ref_48);
    unsigned short x[3], y[3], z[3];
    memcpy(x, xsubi_start, sizeof x);
    memcpy(y, xsubi_start, sizeof y);
    memcpy(z, xsubi_start, sizeof z);
    for (int i = 0; i < K; ++i) {
        erand48_r(x, &ref_48, &want_erand[i]);
        nrand48_r(y, &ref_48, &want_nrand[i]);
        jrand48_r(z, &ref_48, &want_jrand[i]);
    }
    run_pair("lcong48", lcong);

    /* seed48 (which also restores the default parameters), then worker 0 draws. */
    unsigned short seed[3] = {0x1111, 0x2222, 0x3333};
    unsigned short *prev = seed48(seed);
    unsigned short *ref_prev = seed48_r(seed, &ref_48) == 0 ? ref_48.__old_x : NULL;
    CHECK(prev && ref_prev && memcmp(prev, ref_prev, 3 * sizeof *prev) == 0, "seed48's previous value differs");
    run_pair("seed48", seeded); /* rand continues too */
    for (int w = 0; w < 2; ++w)
        for (int i = 0; i < K; ++i) {
            long wr = ref_rand(), l, m;
            double d;
            drand48_r(&ref_48, &d);
            lrand48_r(&ref_48, &l);
            mrand48_r(&ref_48, &m);
            CHECK(got_rand[w][i] == wr && got_drand[w][i] == d && got_lrand[w][i] == l && got_mrand[w][i] == m,
                  "seed48: worker %d draw %d: rand %ld drand48 %.17g lrand48 %ld mrand48 %ld, want %ld %.17g %ld %ld",
                  w, i, got_rand[w][i], got_drand[w][i], got_lrand[w][i], got_mrand[w][i], wr, d, l, m);
        }

    check_attributes();
    return failures;
}

/* ---- bench: the cost of one job-wide generator ------------------------------- */
static long bench_n;
static volatile long sink;
static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static double bench_time[2];
static void *bench_draw(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    double t0 = seconds();
    long s = 0;
    for (long i = 0; i < bench_n; ++i)
        s += rand();
    sink = s;
    bench_time[id] = seconds() - t0;
    return NULL;
}
static void *bench_one(void *arg)
{
    long id = (long)arg;
    worker_pid[id] = getpid();
    if (id == 0) bench_draw(arg); /* worker 0: on rank 1 */
    return NULL;
}

static void bench(long n)
{
    bench_n = n;
    double t0 = seconds();
    bench_draw((void *)0);
    printf("bench rand: main (rank 0): %.0f calls/s\n", n / (seconds() - t0));
    run_pair("bench one", bench_one);
    printf("bench rand: one worker on rank %s: %.0f calls/s\n", worker_pid[0] == getpid() ? "0" : "1",
           n / bench_time[0]);
    run_pair("bench two", bench_draw);
    printf("bench rand: two workers at once, one per rank: %.0f and %.0f calls/s\n", n / bench_time[0],
           n / bench_time[1]);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    sem_init(&turn, 0, 0);
    if (argc > 2 && strcmp(argv[1], "bench") == 0) {
        bench(atol(argv[2]));
        return 0;
    }
    int bad = run_checks();
    if (bad) {
        printf("FAIL program process_state: %d failures\n", bad);
        return 1;
    }
    printf("PASS program process_state\n");
    return 0;
}
