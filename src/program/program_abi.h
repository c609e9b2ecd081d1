/* Between the startup object (program_start.c, linked into the executable
 * of a program built with agoracc) and the library. Internal: not part of
 * the API, may change with any version. */
#ifndef AGORA_PROGRAM_ABI_H
#define AGORA_PROGRAM_ABI_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Before main (constructor): starts Agora in program mode with the
 * executable's shared windows. Returns on rank 0 only; other ranks serve and
 * run threads placed on them, then end the process. */
void agora_program_start(int argc, char **argv, uintptr_t data_lo, uintptr_t data_hi, uintptr_t bss_lo,
                         uintptr_t bss_hi);
/* Before agora_program_start: the pages of the program's shared .bss that
 * hold libc's job-wide state (random generators, process attributes,
 * strtok; program_libc.cpp).
 * Zero-filled, page aligned, AGORA_PROGRAM_LIBC_BYTES bytes. */
#define AGORA_PROGRAM_LIBC_BYTES (5 * 4096)
void agora_program_libc_state(void *pages, size_t bytes);
/* Before agora_program_start: a page of the program's shared .bss for the
 * OpenMP runtime's job-wide locks (src/omp/omp_job_state.cpp). Zero-filled,
 * page aligned, AGORA_PROGRAM_OMP_BYTES bytes. */
#define AGORA_PROGRAM_OMP_BYTES 4096
void agora_program_omp_state(void *page, size_t bytes);
/* For libagora_omp.so (src/omp/, linked by agoracc -fopenmp), which sees
 * only libagora's exported symbols: that page (NULL before the startup
 * object gave it); the lock named by an address that need not hold a zero
 * agora_lock_t (op: 1 lock, 0 unlock, 2 try: AGORA_OK or AGORA_BUSY, 3:
 * 1 if the calling thread holds it); and the end of the job with a
 * message, as Agora's own errors end it. */
void *agora_program_omp_page(void);
int agora_program_lock_address(const void *address, int op);
void agora_program_fatal(const char *message) __attribute__((noreturn));
/* Before agora_program_start: the program's own .fini_array entries
 * [first, end) (its destructor functions), which ld.so does not run: rank 0
 * runs them backwards, once, when the job ends, before global memory goes. */
void agora_program_destructors(void (*const *first)(void), void (*const *end)(void));
/* Runs main on a stack in global memory, with argv and envp copied into
 * global memory; ends the process with main's status (never returns). */
void agora_program_main(int (*real_main)(int, char **, char **), int argc, char **argv, char **envp);
/* exit(status) by the program: returns if the real exit should proceed. By
 * an agora thread other than main (any rank): rank 0 runs the exit with
 * status and ends the job; never returns. */
void agora_program_exit(int status);
/* _exit/_Exit(status) by the program: the job ends with status, no exit
 * handlers; returns only in a fork() child or outside the job. */
void agora_program_quick_exit(int status);

/* Thread-specific data keys (api/thread_keys.cpp): the job's key table,
 * defined in the startup object in a section agora-program.ld places in the
 * shared .bss (global memory homed on rank 0, the same address on every
 * rank), read and written only under the address-named lock of the table.
 * A key is (generation << 10) | index: a slot's generation grows with each
 * key made in it, so a key made again in a deleted key's slot differs from
 * the old one, and values set for the old one are not its. */
#define AGORA_PROGRAM_KEYS 1024 /* PTHREAD_KEYS_MAX */
struct agora_program_key {
    uint32_t generation; /* of the slot's last key (0: never used) */
    uint32_t in_use;
    uint64_t destructor; /* offset in its module; in the executable (non-PIE) its address; 0: none */
    char *module;        /* in global memory; NULL: the executable */
};
void agora_program_keys(struct agora_program_key *table);

/* File descriptors (program/program_descriptors.cpp): the job's table of
 * the program's descriptors, defined in the startup object in the shared
 * .bss like the keys, read and written under the address-named lock of the
 * table. owner[n] is the rank that opened descriptor n, plus one (0: not a
 * descriptor of the program). */
#define AGORA_PROGRAM_FDS 4096
#define AGORA_PROGRAM_STREAMS 512
struct agora_program_fds {
    uint64_t lock;
    int32_t owner[AGORA_PROGRAM_FDS];
    /* The program's open streams (FILE * of fopen & co) and their ranks
     * (plus one; 0: a free entry), to name another rank's stream. */
    struct {
        uint64_t stream;
        int32_t owner;
        int32_t pad;
    } streams[AGORA_PROGRAM_STREAMS];
};
void agora_program_descriptors(struct agora_program_fds *table);

/* The heap: active once Agora runs in program mode. */
int agora_program_heap_active(void);
int agora_program_heap_owns(const void *p); /* allocated by agora_program_malloc & co */
void *agora_program_malloc(size_t bytes);
void *agora_program_calloc(size_t n, size_t size);
void *agora_program_realloc(void *p, size_t bytes); /* p owned or NULL */
void *agora_program_memalign(size_t alignment, size_t bytes);
void agora_program_free(void *p);
size_t agora_program_usable_size(const void *p);
/* In a fork() child: a copy of p's block (global, as the child sees it) moved into libc's heap. */
void *agora_program_child_realloc(void *p, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
