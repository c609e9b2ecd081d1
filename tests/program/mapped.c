/* Memory the program maps, in program mode (issue 26, docs/programs.md).
 *
 *   mapped mmap   main maps anonymous memory (private and shared) and a
 *                 temporary file (read-only, and writable MAP_PRIVATE at an
 *                 offset) and hands them to two workers, one per rank on
 *                 `agorarun -n 2`: they read the file's bytes, write their
 *                 halves; main checks every byte, that the file is
 *                 unchanged, the refusals (a shared writable file mapping,
 *                 2 TiB, MAP_FIXED, the middle of a mapping; with a size
 *                 in MiB, a second mapping of that size: ENOMEM), msync,
 *                 mprotect and madvise; then mremap and an aligned mapping
 *                 cut from a larger one, handed to workers again, a worker
 *                 unmapping a mapping main made, main reading and
 *                 unmapping the workers' mappings, and a fresh mapping in the
 *                 pages freed.
 *   mapped edges  a mapping made before Agora starts (an early constructor)
 *                 is the kernel's, and is unmapped during the job; after
 *                 the job has ended (a destructor) munmap, msync and
 *                 mprotect of a mapping still live are accepted, and mmap
 *                 is the kernel's again.
 */
#define _GNU_SOURCE
#include <agora/agora.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define WORKERS 2
#define PAGE 4096
#define ANON_BYTES (3 * 65536 + 100) /* not whole pages */
#define SHARED_BYTES (16 * PAGE)
#define FILE_BYTES (200 * 1024 + 77)
#define COW_OFFSET (2 * PAGE)
#define COW_BYTES (FILE_BYTES - COW_OFFSET)
#define ALIGN 65536

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            printf("FAIL: " __VA_ARGS__);                                                                              \
            printf(" (errno %d)\n", errno);                                                                            \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

static unsigned char *anon, *shared_anon, *file_ro, *file_cow, *grown, *aligned;
static int worker_rank[WORKERS];
static unsigned char *worker_map[WORKERS];

static unsigned char file_byte(size_t i) { return (unsigned char)(i * 131 + (i >> 9)); }
static unsigned char anon_byte(size_t i) { return (unsigned char)(i * 7); }
/* The worker that owns byte i of n split in halves. */
static long owner(size_t i, size_t n) { return i < n / WORKERS ? 0 : 1; }

static void *first_worker(void *arg)
{
    long me = (long)arg, bad = 0, bad_file, bad_cow;
    worker_rank[me] = agora_rank();
    for (size_t i = 0; i < FILE_BYTES; i++)
        bad += file_ro[i] != file_byte(i);
    for (size_t i = FILE_BYTES; i % PAGE; i++)
        bad += file_ro[i] != 0; /* past the end of the file */
    bad_file = bad;
    for (size_t i = 0; i < COW_BYTES; i++)
        if (owner(i, COW_BYTES) == me) { /* the other worker writes the other half */
            bad += file_cow[i] != file_byte(COW_OFFSET + i);
            file_cow[i] = (unsigned char)(file_byte(COW_OFFSET + i) ^ 0x5a);
        }
    bad_cow = bad - bad_file;
    for (size_t i = 0; i < ANON_BYTES; i++)
        if (owner(i, ANON_BYTES) == me) {
            bad += anon[i] != anon_byte(i);
            anon[i] = (unsigned char)(anon_byte(i) + me + 1);
        }
    for (size_t i = 0; i < SHARED_BYTES; i++)
        if (owner(i, SHARED_BYTES) == me) shared_anon[i] = (unsigned char)(i * 3 + me);
    if (bad)
        printf("FAIL: worker %ld on rank %d saw %ld wrong bytes (%ld in the read-only file mapping, %ld in the "
               "private one, %ld in the anonymous one)\n",
               me, worker_rank[me], bad, bad_file, bad_cow, bad - bad_file - bad_cow);
    return (void *)bad;
}

/* anon's bytes after the first workers and madvise(MADV_DONTNEED) of its second 64 KiB. */
static unsigned char anon_after(size_t i)
{
    if (i >= 65536 && i < 2 * 65536) return 0;
    return (unsigned char)(anon_byte(i) + owner(i, ANON_BYTES) + 1);
}

static void *second_worker(void *arg)
{
    long me = (long)arg, bad = 0;
    for (size_t i = 0; i < ANON_BYTES; i++)
        bad += grown[i] != anon_after(i);
    for (size_t i = (ANON_BYTES + PAGE - 1) / PAGE * PAGE; i < 4 * ANON_BYTES; i++)
        bad += grown[i] != 0;
    for (size_t i = 0; i < ALIGN; i++)
        if (owner(i, ALIGN) == me) aligned[i] = (unsigned char)(i + 11 * me);
    /* A mapping main made, unmapped by the worker on rank 1. */
    if (agora_rank() == 1 && munmap(file_ro, FILE_BYTES) != 0) {
        printf("FAIL: munmap of main's mapping on rank 1: %s\n", strerror(errno));
        bad++;
    }
    /* A mapping a worker makes, for main to read and unmap. */
    worker_map[me] = mmap(NULL, 2 * PAGE + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (worker_map[me] == MAP_FAILED) return (void *)1;
    memset(worker_map[me], 0x40 + (int)me, 2 * PAGE + 1);
    if (bad) printf("FAIL: worker %ld on rank %d saw %ld wrong bytes after mremap\n", me, agora_rank(), bad);
    return (void *)bad;
}

static long run_workers(void *(*fn)(void *))
{
    pthread_t t[WORKERS];
    long bad = 0;
    for (long w = 0; w < WORKERS; w++)
        if (pthread_create(&t[w], NULL, fn, (void *)w) != 0) return 1;
    for (int w = 0; w < WORKERS; w++) {
        void *r;
        pthread_join(t[w], &r);
        bad += (long)r;
    }
    return bad;
}

static int run_mmap(size_t exhaust_mib)
{
    char path[] = "/tmp/agora-mapped-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    unsigned char *bytes = malloc(FILE_BYTES);
    for (size_t i = 0; i < FILE_BYTES; i++)
        bytes[i] = file_byte(i);
    CHECK(write(fd, bytes, FILE_BYTES) == FILE_BYTES, "write");

    anon = mmap(NULL, ANON_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    shared_anon = mmap(NULL, SHARED_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    file_ro = mmap(NULL, FILE_BYTES, PROT_READ, MAP_PRIVATE, fd, 0);
    file_cow = mmap64(NULL, COW_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, COW_OFFSET);
    CHECK(anon != MAP_FAILED && shared_anon != MAP_FAILED && file_ro != MAP_FAILED && file_cow != MAP_FAILED,
          "mmap: %s", strerror(errno));
    CHECK(((uintptr_t)anon | (uintptr_t)shared_anon | (uintptr_t)file_ro | (uintptr_t)file_cow) % PAGE == 0,
          "a mapping is not page-aligned");
    close(fd); /* the mappings outlive the descriptor */
    long bad = 0;
    for (size_t i = 0; i < ANON_BYTES; i++)
        bad += anon[i] != 0;
    for (size_t i = 0; i < SHARED_BYTES; i++)
        bad += shared_anon[i] != 0;
    CHECK(!bad, "anonymous mappings not zero-filled (%ld bytes)", bad);
    for (size_t i = 0; i < ANON_BYTES; i++)
        anon[i] = anon_byte(i);

    bad = run_workers(first_worker);
    CHECK(!bad, "%ld wrong bytes seen by the workers", bad);
    CHECK(worker_rank[0] != worker_rank[1], "both workers ran on rank %d", worker_rank[0]);
    for (size_t i = 0; i < ANON_BYTES; i++)
        bad += anon[i] != (unsigned char)(anon_byte(i) + owner(i, ANON_BYTES) + 1);
    for (size_t i = 0; i < SHARED_BYTES; i++)
        bad += shared_anon[i] != (unsigned char)(i * 3 + owner(i, SHARED_BYTES));
    for (size_t i = 0; i < COW_BYTES; i++)
        bad += file_cow[i] != (unsigned char)(file_byte(COW_OFFSET + i) ^ 0x5a);
    CHECK(!bad, "%ld wrong bytes after the workers", bad);
    /* A private mapping's stores never reach the file. */
    fd = open(path, O_RDWR);
    CHECK(fd >= 0 && pread(fd, bytes, FILE_BYTES, 0) == FILE_BYTES, "reading the file back");
    for (size_t i = 0; i < FILE_BYTES; i++)
        bad += bytes[i] != file_byte(i);
    CHECK(!bad, "%ld bytes of the file changed through a MAP_PRIVATE mapping", bad);

    /* Refused with errno and a message. */
    errno = 0;
    CHECK(mmap(NULL, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED && errno == ENODEV,
          "a writable MAP_SHARED file mapping was not refused with ENODEV");
    close(fd);
    unlink(path);
    errno = 0;
    CHECK(mmap(NULL, (size_t)1 << 41, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED && errno == ENOMEM,
          "a 2 TiB mapping was not refused with ENOMEM");
    if (exhaust_mib) { /* two of these do not fit in the placed region: ENOMEM, then room again after munmap */
        size_t bytes = exhaust_mib << 20;
        unsigned char *first = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(first != MAP_FAILED, "mmap of %zu MiB", exhaust_mib);
        errno = 0;
        CHECK(mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED && errno == ENOMEM,
              "a second mapping of %zu MiB was not refused with ENOMEM", exhaust_mib);
        first[bytes - 1] = 1;
        CHECK(munmap(first, bytes) == 0, "munmap of %zu MiB", exhaust_mib);
        first = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(first != MAP_FAILED && first[bytes - 1] == 0 && munmap(first, bytes) == 0, "mmap of %zu MiB after munmap",
              exhaust_mib);
    }
    errno = 0;
    CHECK(mmap(anon, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED && errno == EINVAL,
          "MAP_FIXED was not refused with EINVAL");
    errno = 0;
    CHECK(munmap(anon + PAGE, PAGE) == -1 && errno == EINVAL, "munmap of the middle of a mapping was not refused");
    /* msync has nothing to write; mprotect is accepted; madvise discards. */
    CHECK(msync(file_cow, COW_BYTES, MS_SYNC) == 0, "msync");
    CHECK(mprotect(anon, PAGE, PROT_READ) == 0 && mprotect(anon, PAGE, PROT_READ | PROT_WRITE) == 0, "mprotect");
    CHECK(madvise(anon + 65536, 65536, MADV_DONTNEED) == 0, "madvise(MADV_DONTNEED) of private memory");
    CHECK(madvise(shared_anon, SHARED_BYTES, MADV_DONTNEED) == 0, "madvise(MADV_DONTNEED) of shared memory");
    CHECK(madvise(anon, ANON_BYTES, MADV_SEQUENTIAL) == 0, "madvise(MADV_SEQUENTIAL)");
    for (size_t i = 0; i < ANON_BYTES; i++)
        bad += anon[i] != anon_after(i);
    for (size_t i = 0; i < SHARED_BYTES; i++)
        bad += shared_anon[i] != (unsigned char)(i * 3 + owner(i, SHARED_BYTES));
    CHECK(!bad, "%ld wrong bytes after madvise", bad);

    /* mremap keeps the bytes and the new part reads zeros; an aligned
     * mapping cut from a larger one (munmap of its head and tail). */
    grown = mremap(anon, ANON_BYTES, 4 * ANON_BYTES, MREMAP_MAYMOVE);
    CHECK(grown != MAP_FAILED, "mremap: %s", strerror(errno));
    unsigned char *big = mmap(NULL, 3 * ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(big != MAP_FAILED, "mmap of 3 x 64 KiB");
    aligned = (unsigned char *)(((uintptr_t)big + ALIGN - 1) / ALIGN * ALIGN);
    if (aligned != big) CHECK(munmap(big, aligned - big) == 0, "munmap of a mapping's head");
    CHECK(munmap(aligned + ALIGN, big + 3 * ALIGN - (aligned + ALIGN)) == 0, "munmap of a mapping's tail");
    bad = run_workers(second_worker);
    CHECK(!bad, "%ld wrong bytes seen by the workers after mremap", bad);
    for (size_t i = 0; i < ALIGN; i++)
        bad += aligned[i] != (unsigned char)(i + 11 * owner(i, ALIGN));
    CHECK(!bad, "%ld wrong bytes in the aligned mapping", bad);
    for (int w = 0; w < WORKERS; w++) {
        for (size_t i = 0; i < 3 * PAGE; i++)
            bad += worker_map[w][i] != (i <= 2 * PAGE ? 0x40 + w : 0);
        CHECK(!bad, "%ld wrong bytes in worker %d's mapping", bad, w);
        CHECK(munmap(worker_map[w], 2 * PAGE + 1) == 0, "munmap of worker %d's mapping", w);
    }
    CHECK(munmap(grown, 4 * ANON_BYTES) == 0 && munmap(aligned, ALIGN) == 0 && munmap(file_cow, COW_BYTES) == 0 &&
              munmap(shared_anon, SHARED_BYTES) == 0,
          "munmap");
    /* Mapped again in the pages just freed: zeros, not the old bytes. */
    unsigned char *again = mmap(NULL, 4 * ANON_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(again != MAP_FAILED, "mmap after munmap");
    for (size_t i = 0; i < 4 * ANON_BYTES; i++)
        bad += again[i] != 0;
    CHECK(!bad, "%ld bytes of a new mapping are not zero", bad);
    CHECK(munmap(again, 4 * ANON_BYTES) == 0, "munmap");
    free(bytes);
    printf("PASS mapped mmap\n");
    return 0;
}

/* mapped edges */
static unsigned char *early, *early_kept, *live;
static int edges;

__attribute__((constructor(101))) static void map_early(void)
{
    early = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    early_kept = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (early != MAP_FAILED) memset(early, 0x3c, 2 * PAGE);
}

static int run_edges(void)
{
    CHECK(early != MAP_FAILED && early_kept != MAP_FAILED, "mmap in a constructor before Agora started");
    CHECK(!agora_is_global(early), "a mapping made before Agora started is global memory");
    for (int i = 0; i < 2 * PAGE; i++)
        CHECK(early[i] == 0x3c, "byte %d of the early mapping", i);
    CHECK(munmap(early, 2 * PAGE) == 0, "munmap of the early mapping during the job");
    live = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(live != MAP_FAILED && agora_is_global(live), "a mapping made during the job is not global");
    memset(live, 1, 16 * PAGE);
    edges = 1;
    return 0; /* live stays mapped: the destructor below unmaps it */
}

#define AFTER(cond, what)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            printf("FAIL: after the job: %s (errno %d)\n", what, errno);                                               \
            fflush(stdout);                                                                                            \
            _exit(1);                                                                                                  \
        }                                                                                                              \
    } while (0)

/* Runs after the job has ended (after Agora's exit handler). */
__attribute__((destructor)) static void after_job(void)
{
    if (!edges) return;
    AFTER(msync(live, 16 * PAGE, MS_SYNC) == 0, "msync of a mapping made during the job");
    AFTER(mprotect(live, PAGE, PROT_READ) == 0, "mprotect of a mapping made during the job");
    AFTER(munmap(live, 16 * PAGE) == 0, "munmap of a mapping made during the job");
    unsigned char *late = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    AFTER(late != MAP_FAILED, "mmap");
    memset(late, 7, 4 * PAGE);
    for (int i = 0; i < 4 * PAGE; i++)
        AFTER(late[i] == 7, "a byte of a mapping made after the job");
    unsigned char *moved = mremap(late, 4 * PAGE, 64 * PAGE, MREMAP_MAYMOVE);
    AFTER(moved != MAP_FAILED && moved[4 * PAGE - 1] == 7, "mremap");
    AFTER(munmap(moved, 64 * PAGE) == 0 && munmap(early_kept, PAGE) == 0, "munmap");
    printf("PASS mapped edges\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "edges") == 0) return run_edges();
    return run_mmap(argc > 2 ? strtoul(argv[2], NULL, 10) : 0);
}
