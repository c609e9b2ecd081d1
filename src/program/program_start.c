/* The startup object of a program built with agoracc (linked into the
 * executable itself, never archived; see docs/programs.md). It starts Agora
 * before main, runs main on a stack in global memory, and routes the
 * program's own malloc & co to global memory. The `ld --wrap` options in
 * agora-program.wrap turn the program's references to main, exit and the
 * heap functions into references to the __wrap_ functions here; __real_
 * names reach the originals. Its own data is excluded from the shared
 * windows by agora-program.ld (it stays per rank), except the page of
 * .bss.agora_shared. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "program/program_abi.h"

/* Bracket the shared windows; defined by agora-program.ld. */
extern char __agora_shared_data_start[], __agora_shared_data_end[];
extern char __agora_shared_bss_start[], __agora_shared_bss_end[];
/* The program's __attribute__((destructor)) functions, moved out of
 * .fini_array by agora-program.ld: rank 0 runs them at the job's end. */
typedef void (*agora_fini_fn)(void);
extern agora_fini_fn __agora_program_fini_start[], __agora_program_fini_end[];

/* The job's thread-specific data keys: this object's data stays per rank,
 * except this section, which agora-program.ld puts in the shared .bss. */
__attribute__((
    section(".bss.agora_shared"))) static struct agora_program_key agora_program_key_table[AGORA_PROGRAM_KEYS];
/* The job's table of the program's file descriptors (program_descriptors.cpp). */
__attribute__((section(".bss.agora_shared"), aligned(4096))) static struct agora_program_fds agora_program_fd_table;
/* libc's process-wide state made job-wide (the random generators' states:
 * program_libc.cpp): pages of the program's shared .bss, although this
 * object's own data stays per rank. agora-program.ld places the section
 * .bss.agora_shared of this object in the shared window; pages of their
 * own, so that no global of the program shares them. */
__attribute__((section(".bss.agora_shared"), aligned(4096))) static char agora_libc_pages[AGORA_PROGRAM_LIBC_BYTES];
/* The OpenMP runtime's job-wide locks (unnamed critical, GOMP_atomic_start):
 * zero words at the same address on every rank. */
__attribute__((section(".bss.agora_shared"), aligned(4096))) static char agora_omp_page[AGORA_PROGRAM_OMP_BYTES];

/* Priority 102: before the program's own constructors (which then write
 * their globals into shared memory, once, on rank 0), after the shared
 * libraries' (libc, MPI) and Agora's own static objects (priority 101; the
 * library must have no constructor of default priority). glibc passes argc,
 * argv and envp. */
__attribute__((constructor(102))) static void agora_program_constructor(int argc, char **argv, char **envp)
{
    (void)envp;
    agora_program_keys(agora_program_key_table);
    agora_program_descriptors(&agora_program_fd_table);
    agora_program_libc_state(agora_libc_pages, sizeof agora_libc_pages);
    agora_program_omp_state(agora_omp_page, sizeof agora_omp_page);
    agora_program_destructors(__agora_program_fini_start, __agora_program_fini_end);
    agora_program_start(argc, argv, (uintptr_t)__agora_shared_data_start, (uintptr_t)__agora_shared_data_end,
                        (uintptr_t)__agora_shared_bss_start, (uintptr_t)__agora_shared_bss_end);
}

int __real_main(int, char **, char **);
int __wrap_main(int argc, char **argv, char **envp)
{
    agora_program_main(__real_main, argc, argv, envp);
    return 0; /* not reached */
}

void __real_exit(int) __attribute__((noreturn));
void __wrap_exit(int status)
{
    agora_program_exit(status);
    __real_exit(status);
}

void __real__exit(int) __attribute__((noreturn));
void __wrap__exit(int status)
{
    agora_program_quick_exit(status);
    __real__exit(status);
}

void __real__Exit(int) __attribute__((noreturn));
void __wrap__Exit(int status)
{
    agora_program_quick_exit(status);
    __real__Exit(status);
}

/* ---- the heap ---------------------------------------------------------- */
void *__real_malloc(size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
void __real_free(void *);
int __real_posix_memalign(void **, size_t, size_t);
void *__real_aligned_alloc(size_t, size_t);
void *__real_memalign(size_t, size_t);
void *__real_valloc(size_t);
void *__real_pvalloc(size_t);
void *__real_reallocarray(void *, size_t, size_t);
char *__real_strdup(const char *);
char *__real_strndup(const char *, size_t);
size_t __real_malloc_usable_size(void *);

void *__wrap_malloc(size_t n) { return agora_program_heap_active() ? agora_program_malloc(n) : __real_malloc(n); }

void *__wrap_calloc(size_t n, size_t size)
{
    return agora_program_heap_active() ? agora_program_calloc(n, size) : __real_calloc(n, size);
}

void __wrap_free(void *p)
{
    if (agora_program_heap_owns(p))
        agora_program_free(p);
    else
        __real_free(p); /* libc's: getline's buffer, strdup inside libc, ... */
}

void *__wrap_realloc(void *p, size_t n)
{
    if (!agora_program_heap_active())
        return agora_program_heap_owns(p) ? agora_program_child_realloc(p, n) : __real_realloc(p, n);
    if (!p || agora_program_heap_owns(p)) return agora_program_realloc(p, n);
    /* A block libc allocated (e.g. getline's) moves into global memory. */
    if (n == 0) {
        __real_free(p);
        return NULL;
    }
    void *q = agora_program_malloc(n);
    if (!q) return NULL;
    size_t old = __real_malloc_usable_size(p);
    memcpy(q, p, old < n ? old : n);
    __real_free(p);
    return q;
}

void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return __wrap_realloc(p, n * size);
}

void *__wrap_memalign(size_t alignment, size_t n)
{
    return agora_program_heap_active() ? agora_program_memalign(alignment, n) : __real_memalign(alignment, n);
}

int __wrap_posix_memalign(void **out, size_t alignment, size_t n)
{
    if (!agora_program_heap_active()) return __real_posix_memalign(out, alignment, n);
    if (alignment < sizeof(void *) || (alignment & (alignment - 1))) return EINVAL;
    void *p = agora_program_memalign(alignment, n);
    if (!p) return errno ? errno : ENOMEM;
    *out = p;
    return 0;
}

void *__wrap_aligned_alloc(size_t alignment, size_t n)
{
    return agora_program_heap_active() ? agora_program_memalign(alignment, n) : __real_aligned_alloc(alignment, n);
}

void *__wrap_valloc(size_t n)
{
    return agora_program_heap_active() ? agora_program_memalign(4096, n) : __real_valloc(n);
}

void *__wrap_pvalloc(size_t n)
{
    if (!agora_program_heap_active()) return __real_pvalloc(n);
    if (n > SIZE_MAX - 4095) {
        errno = ENOMEM;
        return NULL;
    }
    return agora_program_memalign(4096, (n + 4095) & ~(size_t)4095);
}

char *__wrap_strdup(const char *s)
{
    if (!agora_program_heap_active()) return __real_strdup(s);
    size_t n = strlen(s) + 1;
    char *p = agora_program_malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

char *__wrap_strndup(const char *s, size_t max)
{
    if (!agora_program_heap_active()) return __real_strndup(s, max);
    size_t n = strnlen(s, max);
    char *p = agora_program_malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

size_t __wrap_malloc_usable_size(void *p)
{
    return agora_program_heap_owns(p) ? agora_program_usable_size(p) : __real_malloc_usable_size(p);
}
