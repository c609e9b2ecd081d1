/* File descriptors are job-wide in program mode (issue 26): a descriptor
 * main opens on rank 0 is the same open file, with the same offset, in a
 * thread on rank 1; and a number the program never opened (on rank 1 one of
 * MPI's sockets) cannot be reached: EBADF, never a write into MPI's socket.
 * Run on 2 ranks with one thread per rank, so main's first thread runs on
 * rank 1 (checked).
 *
 * descriptors share   main opens a file and a pipe; the thread on rank 1
 *                     writes, seeks, reads, pwrites, preads, fstats,
 *                     truncates, dups; opens a file of its own that main
 *                     reads after the join; exact content and offsets
 * descriptors closed  a descriptor closed by main, then used on rank 1;
 *                     one closed on rank 1, then used by main: EBADF
 * descriptors guard   the thread on rank 1 writes to a socket that is
 *                     open on rank 1 but not the program's: EBADF
 * descriptors stream  main's fopen'd stream: its fileno works on rank 1;
 *                     then fprintf on the stream itself on rank 1 stops
 *                     the job with a message (so this mode exits non-zero)
 * Prints PASS ... and exits 0, or FAIL lines and exits 1. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agora/agora.h"
#include "failure_count.h"

static char path[64], path_thread[64];
static int fd, pipe_fds[2], fd_thread = -1;
static FILE *stream;

static void *on_thread(void *(*fn)(void *))
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fn, NULL) == 0, "create");
    void *ret = NULL;
    CHECK(pthread_join(t, &ret) == 0, "join");
    return ret;
}

static void check_rank1(const char *what)
{
    CHECK(agora_rank() == 1, "%s: the thread runs on rank %d, not 1 (the test needs 2 ranks, 1 thread per rank)", what,
          agora_rank());
}

/* ---- share ------------------------------------------------------------------- */
static const char head[] = "main wrote this;";
static const char body[] = "the thread on rank 1 wrote this.";

static void *share_thread(void *arg)
{
    (void)arg;
    check_rank1("share");
    size_t h = strlen(head), b = strlen(body);
    /* main's offset is where its write ended: the thread appends there. */
    CHECK(lseek(fd, 0, SEEK_CUR) == (off_t)h, "lseek(SEEK_CUR) on rank 1: %lld, want %zu",
          (long long)lseek(fd, 0, SEEK_CUR), h);
    CHECK(write(fd, body, b) == (ssize_t)b, "write on rank 1: %s", strerror(errno));
    char got[128] = {0};
    CHECK(lseek(fd, 0, SEEK_SET) == 0, "lseek(0) on rank 1: %s", strerror(errno));
    CHECK(read(fd, got, sizeof got) == (ssize_t)(h + b), "read on rank 1");
    CHECK(memcmp(got, head, h) == 0 && memcmp(got + h, body, b) == 0, "read on rank 1: '%s'", got);
    /* pwrite/pread leave the offset alone. */
    CHECK(pwrite(fd, "MAIN", 4, 0) == 4, "pwrite on rank 1: %s", strerror(errno));
    char four[5] = {0};
    CHECK(pread(fd, four, 4, 0) == 4 && memcmp(four, "MAIN", 4) == 0, "pread on rank 1: '%s'", four);
    CHECK(lseek(fd, 0, SEEK_CUR) == (off_t)(h + b), "the offset after pread/pwrite: %lld",
          (long long)lseek(fd, 0, SEEK_CUR));
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == (off_t)(h + b) && S_ISREG(st.st_mode), "fstat on rank 1: size %lld",
          (long long)st.st_size);
    CHECK(fsync(fd) == 0, "fsync on rank 1: %s", strerror(errno));
    /* A dup of main's descriptor shares its offset (it is main's open file). */
    int copy = dup(fd);
    CHECK(copy > 2 && copy != fd, "dup on rank 1: %d (%s)", copy, strerror(errno));
    CHECK(write(copy, "!", 1) == 1, "write through the dup: %s", strerror(errno));
    CHECK(close(copy) == 0, "close of the dup on rank 1: %s", strerror(errno));
    CHECK(write(pipe_fds[1], "through the pipe", 16) == 16, "write to main's pipe on rank 1: %s", strerror(errno));
    /* A file of the thread's own, which main reads after the join. */
    fd_thread = open(path_thread, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd_thread > 2 && fd_thread != fd && fd_thread != pipe_fds[0] && fd_thread != pipe_fds[1],
          "open on rank 1: %d, main's are %d, %d, %d", fd_thread, fd, pipe_fds[0], pipe_fds[1]);
    CHECK(write(fd_thread, "rank one", 8) == 8, "write to rank 1's own file: %s", strerror(errno));
    return NULL;
}

static void share(void)
{
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd > 2, "open: %s", strerror(errno));
    CHECK(pipe(pipe_fds) == 0, "pipe: %s", strerror(errno));
    size_t h = strlen(head), b = strlen(body);
    CHECK(write(fd, head, h) == (ssize_t)h, "write by main");
    on_thread(share_thread);
    /* The thread left the offset after its dup's write. */
    CHECK(lseek(fd, 0, SEEK_CUR) == (off_t)(h + b + 1), "main's offset after the thread: %lld, want %zu",
          (long long)lseek(fd, 0, SEEK_CUR), h + b + 1);
    char got[128] = {0}, want[128];
    snprintf(want, sizeof want, "MAIN%s%s!", head + 4, body);
    CHECK(pread(fd, got, sizeof got, 0) == (ssize_t)strlen(want) && strcmp(got, want) == 0,
          "the file after the join: '%s', want '%s'", got, want);
    CHECK(ftruncate(fd, 4) == 0, "ftruncate: %s", strerror(errno));
    char pipe_got[17] = {0};
    CHECK(read(pipe_fds[0], pipe_got, 16) == 16 && strcmp(pipe_got, "through the pipe") == 0, "the pipe: '%s'",
          pipe_got);
    /* Rank 1's own descriptor, from main. */
    char own[9] = {0};
    CHECK(lseek(fd_thread, 0, SEEK_SET) == 0, "lseek of rank 1's descriptor by main: %s", strerror(errno));
    CHECK(read(fd_thread, own, 8) == 8 && strcmp(own, "rank one") == 0, "rank 1's file read by main: '%s'", own);
    CHECK(close(fd_thread) == 0, "close of rank 1's descriptor by main: %s", strerror(errno));
    CHECK(close(fd) == 0 && close(pipe_fds[0]) == 0 && close(pipe_fds[1]) == 0, "close");
    /* The file on disk, as an unwrapped reader sees it. */
    FILE *f = fopen(path, "r");
    char disk[16] = {0};
    CHECK(f && fread(disk, 1, sizeof disk, f) == 4 && strcmp(disk, "MAIN") == 0, "on disk: '%s'", disk);
    if (f) fclose(f);
}

/* ---- closed -------------------------------------------------------------------- */
static int result_errno[2];
static ssize_t result[2];

static void *closed_thread(void *arg)
{
    (void)arg;
    check_rank1("closed");
    errno = 0;
    result[0] = write(fd, "x", 1); /* main closed it */
    result_errno[0] = errno;
    CHECK(close(fd_thread) == 0, "close on rank 1 of main's descriptor: %s", strerror(errno));
    return NULL;
}

static void closed(void)
{
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    fd_thread = open(path_thread, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd > 2 && fd_thread > 2, "open: %s", strerror(errno));
    CHECK(close(fd) == 0, "close by main");
    on_thread(closed_thread);
    CHECK(result[0] == -1 && result_errno[0] == EBADF, "write on rank 1 after main's close: %zd (%s), want EBADF",
          result[0], strerror(result_errno[0]));
    errno = 0;
    result[1] = write(fd_thread, "x", 1); /* rank 1 closed it */
    CHECK(result[1] == -1 && errno == EBADF, "write by main after rank 1's close: %zd (%s), want EBADF", result[1],
          strerror(errno));
}

/* ---- guard --------------------------------------------------------------------- */
static int socket_fd = -1;

static void *guard_thread(void *arg)
{
    (void)arg;
    check_rank1("guard");
    /* A socket open on rank 1 that the program did not open: MPI's or Agora's. */
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int n = atoi(e->d_name);
        char link[64], target[128] = {0};
        snprintf(link, sizeof link, "/proc/self/fd/%d", n);
        if (n > 2 && n != dirfd(d) && readlink(link, target, sizeof target - 1) > 0 &&
            strncmp(target, "socket:", 7) == 0) {
            socket_fd = n;
            break;
        }
    }
    if (d) closedir(d);
    CHECK(socket_fd > 2, "no socket open on rank 1 to try");
    if (socket_fd > 2) {
        char junk[64];
        memset(junk, 0xab, sizeof junk);
        errno = 0;
        result[0] = write(socket_fd, junk, sizeof junk);
        result_errno[0] = errno;
    }
    return NULL;
}

static void guard(void)
{
    on_thread(guard_thread);
    CHECK(result[0] == -1 && result_errno[0] == EBADF,
          "write on rank 1 to socket %d, not the program's: %zd (%s), want EBADF", socket_fd, result[0],
          strerror(result_errno[0]));
    printf("guard: socket %d on rank 1\n", socket_fd);
}

/* ---- stream -------------------------------------------------------------------- */
static void *stream_thread(void *arg)
{
    (void)arg;
    check_rank1("stream");
    /* The stream's descriptor is job-wide. */
    CHECK(write(fd, " and rank 1", 11) == 11, "write on rank 1 to fileno(main's stream): %s", strerror(errno));
    char got[32] = {0};
    CHECK(pread(fd, got, sizeof got, 0) == 15 && strcmp(got, "main and rank 1") == 0,
          "main's file read on rank 1 after its write: '%s'", got);
    if (failures == 0) printf("stream fileno: ok\n");
    fflush(stdout);
    fprintf(stream, "from rank %d\n", agora_rank()); /* the stream itself is rank 0's: stops the job */
    fflush(stream);
    return NULL;
}

static void streams(void)
{
    stream = fopen(path, "w+");
    CHECK(stream != NULL, "fopen: %s", strerror(errno));
    fprintf(stream, "main");
    fflush(stream);
    fd = fileno(stream);
    on_thread(stream_thread);
    CHECK(0, "fprintf on rank 1 to main's stream did not stop the job");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "share";
    snprintf(path, sizeof path, "/tmp/agora_descriptors_%d", (int)getpid());
    snprintf(path_thread, sizeof path_thread, "/tmp/agora_descriptors_%d_thread", (int)getpid());
    if (strcmp(mode, "share") == 0)
        share();
    else if (strcmp(mode, "closed") == 0)
        closed();
    else if (strcmp(mode, "guard") == 0)
        guard();
    else if (strcmp(mode, "stream") == 0)
        streams();
    else {
        fprintf(stderr, "usage: descriptors share|closed|guard|stream\n");
        return 2;
    }
    unlink(path);
    unlink(path_thread);
    if (failures) {
        printf("FAIL descriptors %s: %d failures\n", mode, failures);
        return 1;
    }
    printf("PASS descriptors %s\n", mode);
    return 0;
}
