/* System calls on global memory and fork(), on real ranks.
 *   syscalls io     read/pread/preadv/readv/recv/recvfrom/recvmsg/fread (and
 *                   __read_chk, __fread_chk) into, and write/pwrite/pwritev/
 *                   writev/send/sendto/sendmsg/fwrite out of, global arrays
 *                   homed on another rank (also with O_DIRECT),
 *                   large (several pages, unaligned) and small (across a page
 *                   boundary); every byte checked, on every rank afterwards.
 *   syscalls contend [rounds]  every rank read()s into its own slice of the
 *                   same two pages, concurrently (pages move under sc).
 *   syscalls fork   children touching global memory die with the message and
 *                   change nothing; a child calling the API gets an error; a
 *                   child that only exits prints nothing; fork()+exec, system()
 *                   and popen() work. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define PAGE 4096
#define SLOT (5 * PAGE) /* one case's region */
#define CASES 12
#define ARRAY ((CASES + 1) * SLOT)
#define LARGE (4 * PAGE + 1000) /* several pages, unaligned both ends */
#define LARGE_AT 123
#define SMALL 17
#define SMALL_AT (PAGE - 5) /* across a page boundary */

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp);

static unsigned char pattern(int seed, size_t i)
{
    uint32_t x = (uint32_t)(i * 2654435761u) ^ (uint32_t)(seed * 40503u);
    return (unsigned char)((x >> 13) ^ (x >> 3) ^ 0x5a);
}

static void fill(unsigned char *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(seed, i);
}

/* Every byte of the case's slot: the pattern inside [at, at+n), zero around it. */
static void check_slot(const unsigned char *slot, size_t at, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < SLOT; i++) {
        unsigned char want = i >= at && i < at + n ? pattern(seed, i - at) : 0;
        CHECK(slot[i] == want, "%s: byte %zu of the slot is %d, expected %d", what, i, slot[i], want);
    }
}

static void check_bytes(const unsigned char *got, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == pattern(seed, i), "%s: byte %zu is %d, expected %d", what, i, got[i], pattern(seed, i));
}

/* Reads or receives until n bytes (a pipe or stream may deliver less). */
static void read_full(int fd, unsigned char *p, size_t n, int use_recv, const char *what)
{
    size_t done = 0;
    while (done < n) {
        ssize_t got = use_recv ? recv(fd, p + done, n - done, 0) : read(fd, p + done, n - done);
        CHECK(got > 0, "%s: returned %zd after %zu of %zu bytes (errno %s)", what, got, done, n, strerror(errno));
        done += (size_t)got;
    }
}

static FILE *temp_file_with(const unsigned char *data, size_t n)
{
    FILE *f = tmpfile();
    CHECK(f != NULL, "tmpfile: %s", strerror(errno));
    CHECK(fwrite(data, 1, n, f) == n, "fwrite to the temporary file");
    fflush(f);
    rewind(f);
    return f;
}

/* Reads page by page so the pages hold a read-only copy: the kernel's copy
 * into them would then fail on the write permission. */
static void read_touch(const unsigned char *p, size_t n)
{
    volatile unsigned sum = 0;
    for (size_t i = 0; i < n; i += PAGE)
        sum += p[i];
    (void)sum;
}

static void into_global(unsigned char *arr)
{
    unsigned char src[LARGE];
    for (int c = 0; c < CASES; c++) {
        unsigned char *slot = arr + (size_t)c * SLOT;
        int small = c % 2;
        size_t at = small ? SMALL_AT : LARGE_AT, n = small ? SMALL : LARGE;
        unsigned char *dst = slot + at;
        int seed = 1000 + c;
        fill(src, n, seed);
        if (c % 4 >= 2) read_touch(slot, SLOT);
        char what[64];
        switch (c / 2) {
        case 0: { /* read() and __read_chk() from a file */
            snprintf(what, sizeof what, "read %zu bytes from a file", n);
            FILE *f = temp_file_with(src, n);
            ssize_t got = small ? __read_chk(fileno(f), dst, n, n) : read(fileno(f), dst, n);
            CHECK(got == (ssize_t)n, "%s: returned %zd (errno %s)", what, got, strerror(errno));
            fclose(f);
            break;
        }
        case 1: { /* pread() / preadv() at an offset */
            snprintf(what, sizeof what, "%s %zu bytes from a file", small ? "preadv" : "pread", n);
            unsigned char shifted[LARGE + 333];
            memset(shifted, 0xee, 333);
            memcpy(shifted + 333, src, n);
            FILE *f = temp_file_with(shifted, n + 333);
            struct iovec one = {dst, n};
            ssize_t got = small ? preadv(fileno(f), &one, 1, 333) : pread(fileno(f), dst, n, 333);
            CHECK(got == (ssize_t)n, "%s: returned %zd (errno %s)", what, got, strerror(errno));
            fclose(f);
            break;
        }
        case 2: { /* fread() and __fread_chk() */
            snprintf(what, sizeof what, "fread %zu bytes", n);
            FILE *f = temp_file_with(src, n);
            size_t got = small ? __fread_chk(dst, n, 1, n, f) : fread(dst, 1, n, f);
            CHECK(got == n, "%s: returned %zu", what, got);
            /* At the end of the file: a short count, as without Agora. */
            CHECK(fread(dst, 1, n, f) == 0 && feof(f), "%s: fread at end of file", what);
            fclose(f);
            break;
        }
        case 3: { /* read() from a pipe */
            snprintf(what, sizeof what, "read %zu bytes from a pipe", n);
            int fds[2];
            CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
            CHECK(write(fds[1], src, n) == (ssize_t)n, "write to the pipe");
            read_full(fds[0], dst, n, 0, what);
            close(fds[0]);
            close(fds[1]);
            break;
        }
        case 4: { /* recv() on a stream socket, recvfrom() on a datagram socket */
            snprintf(what, sizeof what, "%s %zu bytes", small ? "recvfrom" : "recv", n);
            int sv[2];
            CHECK(socketpair(AF_UNIX, small ? SOCK_DGRAM : SOCK_STREAM, 0, sv) == 0, "socketpair");
            CHECK(send(sv[1], src, n, 0) == (ssize_t)n, "send to the socket");
            if (small) {
                ssize_t got = recvfrom(sv[0], dst, n, 0, NULL, NULL);
                CHECK(got == (ssize_t)n, "%s: returned %zd (errno %s)", what, got, strerror(errno));
            } else {
                read_full(sv[0], dst, n, 1, what);
            }
            close(sv[0]);
            close(sv[1]);
            break;
        }
        case 5: { /* readv() / recvmsg(): a private segment, then the global one */
            snprintf(what, sizeof what, "%s %zu bytes", small ? "recvmsg" : "readv", n);
            unsigned char head[10], both[10 + LARGE];
            memset(both, 0x77, 10);
            memcpy(both + 10, src, n);
            int sv[2];
            CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0, "socketpair");
            CHECK(send(sv[1], both, n + 10, 0) == (ssize_t)(n + 10), "send to the socket");
            struct iovec iov[2] = {{head, 10}, {dst, n}};
            ssize_t got;
            if (small) {
                struct msghdr msg = {0};
                msg.msg_iov = iov;
                msg.msg_iovlen = 2;
                got = recvmsg(sv[0], &msg, 0);
            } else {
                got = readv(sv[0], iov, 2);
            }
            CHECK(got == (ssize_t)(n + 10), "%s: returned %zd (errno %s)", what, got, strerror(errno));
            for (int i = 0; i < 10; i++)
                CHECK(head[i] == 0x77, "%s: private segment byte %d", what, i);
            close(sv[0]);
            close(sv[1]);
            break;
        }
        }
        check_slot(slot, at, n, seed, what);
    }
}

static void out_of_global(const unsigned char *arr, int seed)
{
    unsigned char back[LARGE + 16];
    for (int c = 0; c < CASES; c++) {
        int small = c % 2;
        size_t at = (size_t)c * SLOT + (small ? SMALL_AT : LARGE_AT), n = small ? SMALL : LARGE;
        const unsigned char *src = arr + at;
        /* The array holds pattern(seed, i) at byte i. */
        unsigned char want[LARGE];
        for (size_t i = 0; i < n; i++)
            want[i] = pattern(seed, at + i);
        char what[64];
        memset(back, 0, sizeof back);
        switch (c / 2) {
        case 0:
        case 1:
        case 2: { /* write(), pwrite(), pwritev(), fwrite() to a file */
            const char *how = c / 2 == 0 ? "write" : c / 2 == 2 ? "fwrite" : small ? "pwritev" : "pwrite";
            snprintf(what, sizeof what, "%s %zu bytes to a file", how, n);
            FILE *f = tmpfile();
            CHECK(f != NULL, "tmpfile");
            ssize_t put;
            struct iovec one = {(void *)src, n};
            if (c / 2 == 0)
                put = write(fileno(f), src, n);
            else if (c / 2 == 1)
                put = small ? pwritev(fileno(f), &one, 1, 0) : pwrite(fileno(f), src, n, 0);
            else {
                put = (ssize_t)fwrite(src, 1, n, f);
                CHECK(fflush(f) == 0, "%s: fflush", what);
            }
            CHECK(put == (ssize_t)n, "%s: returned %zd (errno %s)", what, put, strerror(errno));
            CHECK(pread(fileno(f), back, n + 16, 0) == (ssize_t)n, "%s: reading the file back", what);
            fclose(f);
            break;
        }
        case 3: { /* write() into a pipe */
            snprintf(what, sizeof what, "write %zu bytes to a pipe", n);
            int fds[2];
            CHECK(pipe(fds) == 0, "pipe");
            CHECK(write(fds[1], src, n) == (ssize_t)n, "%s (errno %s)", what, strerror(errno));
            read_full(fds[0], back, n, 0, what);
            close(fds[0]);
            close(fds[1]);
            break;
        }
        case 4: { /* send() on a stream socket, sendto() on a datagram socket */
            snprintf(what, sizeof what, "%s %zu bytes", small ? "sendto" : "send", n);
            int sv[2];
            CHECK(socketpair(AF_UNIX, small ? SOCK_DGRAM : SOCK_STREAM, 0, sv) == 0, "socketpair");
            ssize_t put = small ? sendto(sv[1], src, n, 0, NULL, 0) : send(sv[1], src, n, 0);
            CHECK(put == (ssize_t)n, "%s: returned %zd (errno %s)", what, put, strerror(errno));
            read_full(sv[0], back, n, 1, what);
            close(sv[0]);
            close(sv[1]);
            break;
        }
        case 5: { /* writev() / sendmsg(): the global segment between two private ones */
            snprintf(what, sizeof what, "%s %zu bytes", small ? "sendmsg" : "writev", n);
            int sv[2];
            CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0, "socketpair");
            char a[3] = {'a', 'b', 'c'}, z[2] = {'y', 'z'};
            struct iovec iov[3] = {{a, 3}, {(void *)src, n}, {z, 2}};
            ssize_t put;
            if (small) {
                struct msghdr msg = {0};
                msg.msg_iov = iov;
                msg.msg_iovlen = 3;
                put = sendmsg(sv[1], &msg, 0);
            } else {
                put = writev(sv[1], iov, 3);
            }
            CHECK(put == (ssize_t)(n + 5), "%s: returned %zd (errno %s)", what, put, strerror(errno));
            unsigned char whole[LARGE + 5];
            CHECK(recv(sv[0], whole, sizeof whole, 0) == (ssize_t)(n + 5), "%s: receiving", what);
            CHECK(!memcmp(whole, "abc", 3) && !memcmp(whole + 3 + n, "yz", 2), "%s: private segments", what);
            memcpy(back, whole + 3, n);
            close(sv[0]);
            close(sv[1]);
            break;
        }
        }
        for (size_t i = 0; i < n; i++)
            CHECK(back[i] == want[i], "%s: byte %zu is %d, expected %d", what, i, back[i], want[i]);
        for (size_t i = n; i < n + 16; i++)
            CHECK(back[i] == 0, "%s: %zu bytes too many", what, i);
    }
}

/* O_DIRECT: the kernel moves the data straight from/to the buffer, which must
 * be aligned; a bounce buffer must be aligned like the global one. */
#define DIRECT (3 * PAGE)
#define DIRECT_SEED 2000
static void direct_io(unsigned char *in_slot, const unsigned char *out_slot, int out_seed)
{
    char path[] = "/tmp/agora-odirect-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
    static unsigned char src[DIRECT];
    fill(src, DIRECT, DIRECT_SEED);
    CHECK(write(fd, src, DIRECT) == DIRECT, "write the O_DIRECT file");
    close(fd);
    fd = open(path, O_RDWR | O_DIRECT);
    CHECK(fd >= 0, "open(O_DIRECT) in /tmp: %s", strerror(errno));
    ssize_t got = pread(fd, in_slot, DIRECT, 0);
    CHECK(got == DIRECT, "O_DIRECT pread into global memory: returned %zd (errno %s)", got, strerror(errno));
    check_slot(in_slot, 0, DIRECT, DIRECT_SEED, "O_DIRECT pread");
    got = pwrite(fd, out_slot, DIRECT, 0);
    CHECK(got == DIRECT, "O_DIRECT pwrite out of global memory: returned %zd (errno %s)", got, strerror(errno));
    close(fd);
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && read(fd, src, DIRECT) == DIRECT, "read the O_DIRECT file back");
    for (size_t i = 0; i < DIRECT; i++)
        CHECK(src[i] == pattern(out_seed, (size_t)CASES * SLOT + i), "O_DIRECT pwrite: byte %zu", i);
    close(fd);
    unlink(path);
}

static void io(void)
{
    int r = agora_rank(), N = agora_nranks();
    unsigned char *in[16], *out[16];
    CHECK(N <= 16, "at most 16 ranks");
    for (int h = 0; h < N; h++)
        in[h] = test_alloc_placed(ARRAY, AGORA_PLACE_RANK, h);
    for (int h = 0; h < N; h++)
        out[h] = test_alloc_placed(ARRAY, AGORA_PLACE_RANK, h);
    fill(out[r], ARRAY, 7 + r); /* this rank's home pages */
    agora_barrier();

    /* Into an array homed on the next rank, out of one this rank never touched. */
    into_global(in[(r + 1) % N]);
    out_of_global(out[(r + 1) % N], 7 + (r + 1) % N);
    direct_io(in[(r + 1) % N] + (size_t)CASES * SLOT, out[(r + 1) % N] + (size_t)CASES * SLOT, 7 + (r + 1) % N);

    /* Global memory no allocation covers: EFAULT, as without Agora, no crash. */
    unsigned char *beyond = out[N - 1] + ARRAY + 64 * PAGE;
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    CHECK(write(fds[1], "x", 1) == 1, "write");
    errno = 0;
    CHECK(read(fds[0], beyond, 1) == -1 && errno == EFAULT, "read into unallocated global memory: errno %s",
          strerror(errno));
    /* Errors keep their errno on the slow path. */
    errno = 0;
    CHECK(read(-1, in[(r + 1) % N], 10) == -1 && errno == EBADF, "read from a bad descriptor: errno %s",
          strerror(errno));
    close(fds[0]);
    close(fds[1]);

    agora_barrier();
    /* Every rank sees what every rank read in. */
    for (int h = 0; h < N; h++)
        for (int c = 0; c < CASES; c++) {
            char what[64];
            snprintf(what, sizeof what, "case %d seen from rank %d", c, r);
            int small = c % 2;
            check_slot(in[h] + (size_t)c * SLOT, small ? SMALL_AT : LARGE_AT, small ? SMALL : LARGE, 1000 + c, what);
        }
    for (int h = 0; h < N; h++)
        check_slot(in[h] + (size_t)CASES * SLOT, 0, DIRECT, DIRECT_SEED, "O_DIRECT");
    for (int h = 0; h < N; h++)
        check_bytes(out[h], ARRAY, 7 + h, "an array written out");
    agora_barrier();
    PASS("syscalls io");
}

/* Every rank read()s from its own pipe, again and again, into its own
 * slice of the same two pages: under sc the pages move between the ranks
 * while the calls run, and no byte may be lost or land elsewhere. */
static void contend(int rounds)
{
    int r = agora_rank(), N = agora_nranks();
    const size_t slice = 2 * PAGE / 16; /* up to 16 ranks; slices straddle the page boundary */
    unsigned char *pages = test_alloc_placed(2 * PAGE, AGORA_PLACE_RANK, 0);
    unsigned char *mine = pages + (size_t)r * slice + 3;
    const size_t n = slice - 6;
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    agora_barrier();
    unsigned char src[2 * PAGE / 16];
    for (int i = 0; i < rounds; i++) {
        if (i % 4 == 0) agora_barrier(); /* keep the ranks in step, so the pages keep moving */
        fill(src, n, i * 31 + r);
        CHECK(write(fds[1], src, n) == (ssize_t)n, "write to the pipe");
        read_full(fds[0], mine, n, 0, "read into a shared page");
        check_bytes(mine, n, i * 31 + r, "a slice read into a contended page");
    }
    close(fds[0]);
    close(fds[1]);
    agora_barrier();
    for (int q = 0; q < N; q++)
        check_bytes(pages + (size_t)q * slice + 3, n, (rounds - 1) * 31 + q, "final slices");
    agora_barrier();
    PASS("syscalls contend");
}

/* Not a test: nanoseconds per read() of 64 bytes from /dev/zero into private
 * memory through the wrapper and through syscall() (the wrapper's cost), and
 * into a global page homed here (the bounce's cost). */
static void cost(int calls)
{
    unsigned char *home = test_alloc_placed(PAGE, AGORA_PLACE_RANK, agora_rank());
    unsigned char private_buf[64];
    int fd = open("/dev/zero", O_RDONLY);
    CHECK(fd >= 0, "open /dev/zero");
    double t[3];
    for (int kind = 0; kind < 3; kind++) {
        double t0 = agora_wtime();
        for (int i = 0; i < calls; i++) {
            ssize_t got = kind == 0   ? syscall(SYS_read, fd, private_buf, 64)
                          : kind == 1 ? read(fd, private_buf, 64)
                                      : read(fd, home + 100, 64);
            CHECK(got == 64, "read");
        }
        t[kind] = (agora_wtime() - t0) / calls * 1e9;
    }
    close(fd);
    if (agora_rank() == 0)
        printf("ns per 64-byte read(): syscall() %.1f, wrapper on private memory %.1f, "
               "wrapper on global memory %.1f\n",
               t[0], t[1], t[2]);
    agora_barrier();
}

/* Runs child() in a fork()ed child; returns its wait status and what it
 * printed on stderr. */
static int run_child(void (*child)(unsigned char **), unsigned char **arrays, char *err, size_t size)
{
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        child(arrays);
        _exit(99);
    }
    close(p[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < size && (n = read(p[0], err + got, size - 1 - got)) > 0)
        got += (size_t)n;
    err[got] = 0;
    close(p[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    return status;
}

/* The parent's rank, for children (which may not ask the API). */
static int g_rank, g_nranks;

static void child_writes_remote(unsigned char **arrays)
{
    volatile unsigned char *p = arrays[(g_rank + 1) % g_nranks] + 100;
    *p = 0xab;
}
static void child_reads_home(unsigned char **arrays)
{
    volatile unsigned char *p = arrays[g_rank] + 5; /* readable in the parent */
    (void)*p;
}
static void child_calls_api(unsigned char **arrays)
{
    int rank = agora_rank(), barrier = agora_barrier();
    int fds[2];
    if (pipe(fds) != 0 || write(fds[1], "abc", 3) != 3) _exit(10);
    errno = 0;
    ssize_t got = read(fds[0], arrays[0], 3);
    /* 0: as expected (the exit code tells the parent what went wrong). */
    exit(rank == -1 && barrier == AGORA_ERR_NOT_INITIALIZED ? (got == -1 && errno == EFAULT ? 0 : 12) : 11);
}
static void child_exits(unsigned char **arrays)
{
    (void)arrays;
    exit(7);
}

static const char kNoMemory[] = "global memory is not available in a process made by fork()";

static void forks(void)
{
    int r = agora_rank(), N = agora_nranks();
    g_rank = r;
    g_nranks = N;
    unsigned char *arr[16];
    CHECK(N <= 16, "at most 16 ranks");
    for (int h = 0; h < N; h++)
        arr[h] = test_alloc_placed(4 * PAGE, AGORA_PLACE_RANK, h);
    fill(arr[r], 4 * PAGE, 50 + r);
    agora_barrier();
    /* The parent reads the arrays first, so the child inherits no access bits
     * that could matter: global memory must simply be absent there. */
    for (int h = 0; h < N; h++)
        check_bytes(arr[h], 4 * PAGE, 50 + h, "before fork");
    char err[4096];

    int status = run_child(child_writes_remote, arr, err, sizeof err);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "a child writing global memory: status 0x%x, stderr: %s",
          status, err);
    CHECK(strstr(err, kNoMemory) && strstr(err, "write of"), "the child's message: %s", err);
    CHECK(strstr(err, "forked from rank"), "the child's message names no rank as its own: %s", err);

    status = run_child(child_reads_home, arr, err, sizeof err);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "a child reading global memory: status 0x%x, stderr: %s",
          status, err);
    CHECK(strstr(err, kNoMemory) && strstr(err, "read of"), "the child's message: %s", err);

    status = run_child(child_calls_api, arr, err, sizeof err);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a child calling the API: status 0x%x, stderr: %s", status,
          err);
    CHECK(strstr(err, "agora_rank called in a process made by fork()") &&
              strstr(err, "agora_barrier called in a process made by fork()"),
          "the API's messages in the child: %s", err);
    CHECK(!strstr(err, "the job ends"), "a false message from the child: %s", err);

    status = run_child(child_exits, arr, err, sizeof err);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7, "a child that exits: status 0x%x", status);
    CHECK(err[0] == 0, "a child that only exits printed: %s", err);

    /* fork()+exec keeps working (system() and popen() use posix_spawn). */
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        execlp("sh", "sh", "-c", "exit 5", (char *)NULL);
        _exit(99);
    }
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 5, "fork()+exec: status 0x%x",
          status);
    CHECK(system("true") == 0, "system(\"true\")");
    FILE *p = popen("echo agora", "r");
    CHECK(p != NULL, "popen");
    char line[32] = {0};
    CHECK(fgets(line, sizeof line, p) && !strcmp(line, "agora\n"), "popen output: %s", line);
    CHECK(pclose(p) == 0, "pclose");

    /* Nothing changed on any rank, and the job goes on. */
    agora_barrier();
    for (int h = 0; h < N; h++)
        check_bytes(arr[h], 4 * PAGE, 50 + h, "after the children");
    agora_lock_t *lock = test_lock_create();
    int64_t *counter = test_alloc(sizeof(int64_t));
    for (int i = 0; i < 20; i++) {
        agora_lock(lock);
        (*counter)++;
        agora_unlock(lock);
    }
    agora_barrier();
    CHECK(*counter == 20 * N, "counter %lld, expected %d", (long long)*counter, 20 * N);
    agora_barrier();
    PASS("syscalls fork");
}

int main(int argc, char **argv)
{
    agora_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "io"))
        io();
    else if (!strcmp(mode, "fork"))
        forks();
    else if (!strcmp(mode, "cost"))
        cost(argc > 2 ? atoi(argv[2]) : 1000000);
    else if (!strcmp(mode, "contend"))
        contend(argc > 2 ? atoi(argv[2]) : 200);
    else
        CHECK(0, "usage: syscalls io|fork|contend [rounds] (got '%s')", mode);
    agora_finalize();
    return 0;
}
