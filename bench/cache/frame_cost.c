/* frame_cost -- what the kernel charges per 4 KiB page for the bounded
 * cache's frame traffic (docs/cache.md, figure 4), with no MPI and no
 * protocol: the floor under every page a spilling sweep evicts and fetches
 * again.
 *
 * A memory file mapped twice, as the runtime maps global memory (a service
 * view the copy is written through, an application view the program reads).
 * Per run of RUN pages, like an install of a fetched run:
 *   resident:  copy into frames that stay allocated, open the run (mprotect)
 *              and read one word per page: what a cached page costs;
 *   discarded: the same into frames whose memory was given back (hole punch),
 *              so the kernel allocates and zeroes each again at first touch;
 *   populated: as discarded, the run's frames allocated in one call first
 *              (MADV_POPULATE_WRITE, as the runtime does: filling_frames);
 *   pooled:    the frame pool's (AGORA_CACHE_FRAMES=pool): the run's copy
 *              goes into frames of a fixed pool that stay allocated, mapped
 *              over the run's place in the application view (mmap MAP_FIXED
 *              of the pool file); pooled_populated: with MAP_POPULATE, the
 *              run's page table filled by the mmap instead of a fault each;
 * and evicting them: close each run of 64 (mprotect PROT_NONE) and punch it
 * (evict), or map the memory file back over a pooled run (evict_pooled).
 * Each figure is the best of REPEATS passes over PAGES pages, in us per page.
 * Writes one JSON object to stdout.
 *
 * Usage: bench_frame_cost [PAGES] [REPEATS] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { PAGE = 4096, RUN = 16, EVICT_RUN = 64 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

int main(int argc, char **argv)
{
    const size_t pages = argc > 1 ? strtoul(argv[1], NULL, 10) / RUN * RUN : 16384;
    const int repeats = argc > 2 ? atoi(argv[2]) : 7;
    if (pages < RUN || repeats < 1) {
        fprintf(stderr, "usage: bench_frame_cost [PAGES >= %d] [REPEATS >= 1]\n", RUN);
        return 2;
    }
    const size_t size = pages * PAGE;
    int fd = memfd_create("frame_cost", 0);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) die("memfd");
    char *service = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *app = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *source = malloc(RUN * PAGE);
    if (service == MAP_FAILED || app == MAP_FAILED || !source) die("mmap");
    memset(source, 7, RUN * PAGE);
    volatile long sink = 0;
    /* The pool: as many frames as one pass installs, allocated once. */
    int pool_fd = memfd_create("frame_cost_pool", 0);
    if (pool_fd < 0 || ftruncate(pool_fd, (off_t)size) != 0) die("memfd");
    char *pool = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, pool_fd, 0);
    if (pool == MAP_FAILED) die("mmap");
    memset(pool, 1, size);
    const char *names[] = {"resident", "discarded", "populated", "pooled", "pooled_populated"};
    double install[5] = {1e9, 1e9, 1e9, 1e9, 1e9}, evict = 1e9, evict_pooled = 1e9;
    for (int rep = 0; rep < repeats; ++rep) {
        for (int populate = 0; populate < 2; ++populate) {
            double p0 = now();
            for (size_t r = 0; r < pages; r += RUN) {
                memcpy(pool + r * PAGE, source, RUN * PAGE);
                if (mmap(app + r * PAGE, RUN * PAGE, PROT_READ, MAP_SHARED | MAP_FIXED | (populate ? MAP_POPULATE : 0),
                         pool_fd, (off_t)(r * PAGE)) == MAP_FAILED)
                    die("mmap");
                for (size_t i = 0; i < RUN; ++i)
                    sink += app[(r + i) * PAGE];
            }
            double pt = (now() - p0) / (double)pages;
            if (pt < install[3 + populate]) install[3 + populate] = pt;
            p0 = now();
            for (size_t r = 0; r < pages; r += RUN)
                if (mmap(app + r * PAGE, RUN * PAGE, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, (off_t)(r * PAGE)) ==
                    MAP_FAILED)
                    die("mmap");
            pt = (now() - p0) / (double)pages;
            if (pt < evict_pooled) evict_pooled = pt;
        }
        for (int mode = 0; mode < 3; ++mode) {
            if (mode == 0)
                memset(service, 1, size); /* every frame allocated */
            else if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)size) != 0)
                die("fallocate");
            if (mprotect(app, size, PROT_NONE) != 0) die("mprotect");
            double t0 = now();
            for (size_t r = 0; r < pages; r += RUN) {
                if (mode == 2 && madvise(service + r * PAGE, RUN * PAGE, MADV_POPULATE_WRITE) != 0) die("madvise");
                memcpy(service + r * PAGE, source, RUN * PAGE);
                if (mprotect(app + r * PAGE, RUN * PAGE, PROT_READ) != 0) die("mprotect");
                for (size_t i = 0; i < RUN; ++i)
                    sink += app[(r + i) * PAGE];
            }
            double t = (now() - t0) / (double)pages;
            if (t < install[mode]) install[mode] = t;
        }
        double t0 = now();
        for (size_t r = 0; r < pages; r += EVICT_RUN) {
            size_t n = pages - r < EVICT_RUN ? pages - r : EVICT_RUN;
            if (mprotect(app + r * PAGE, n * PAGE, PROT_NONE) != 0) die("mprotect");
            if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(r * PAGE), (off_t)(n * PAGE)) != 0)
                die("fallocate");
        }
        double t = (now() - t0) / (double)pages;
        if (t < evict) evict = t;
    }
    printf("{\"program\": \"frame_cost\", \"pages\": %zu, \"repeats\": %d, \"run\": %d, \"us_per_page\": {", pages,
           repeats, RUN);
    for (int mode = 0; mode < 5; ++mode)
        printf("\"install_%s\": %.3f, ", names[mode], install[mode] * 1e6);
    printf("\"evict\": %.3f, \"evict_pooled\": %.3f}}\n", evict * 1e6, evict_pooled * 1e6);
    return sink == 42 ? 1 : 0; /* keeps the reads */
}
