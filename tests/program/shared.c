/* Program mode: an ordinary C program whose threads (on every rank) share
 * its globals, main's stack and malloc'd memory. main sets globals (ints, a
 * .bss array, a static local, pointers to malloc'd memory, argv[1]) that
 * threads on other ranks read; threads write results through pointers to
 * main's stack and into globals main reads after the joins; threads malloc
 * list nodes and push them on a global list under a lock, main frees them
 * (frees of blocks homed on other ranks); main's buffers are realloc'd by
 * the threads on their ranks.
 *
 * shared WORD [THREADS]   (WORD must be argv[1] as main sees it) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <agora/agora.h>

#include "../mpi/check.h"

enum { MAX_THREADS = 64, TABLE = 5000, BUF0 = 100, BUF1 = 3 * 4096 + 17 };

int magic = 12345;         /* .data */
int nthreads;              /* .bss */
long table[TABLE];         /* .bss, spans pages */
double *results;           /* -> malloc'd */
char *message;             /* -> strdup'd */
const char *word;          /* argv[1] */
long written[MAX_THREADS]; /* threads write, main reads */
int ran_on[MAX_THREADS];
agora_lock_t lock;
struct node {
    long value;
    struct node *next;
} * list_head;
long pushed;
unsigned char *bufs[MAX_THREADS]; /* malloc'd by main, realloc'd by threads */

static long *static_counter(void)
{
    static long calls = 100; /* a static local: .data */
    return &calls;
}

struct args {
    int id;
    long in, out;
};

static void *worker(void *p)
{
    struct args *a = p; /* on main's stack */
    int id = a->id;
    CHECK(magic == 12345, "thread %d: magic %d", id, magic);
    CHECK(nthreads >= 1 && nthreads <= MAX_THREADS, "thread %d: nthreads %d", id, nthreads);
    for (long i = 0; i < TABLE; i++)
        CHECK(table[i] == i * 3, "thread %d: table[%ld] = %ld", id, i, table[i]);
    for (int i = 0; i < nthreads; i++)
        CHECK(results[i] == i * 0.5, "thread %d: results[%d] = %g", id, i, results[i]);
    CHECK(strcmp(message, "a message from main") == 0, "thread %d: message '%s'", id, message);
    CHECK(*static_counter() == 107, "thread %d: static local %ld", id, *static_counter());
    CHECK(word && strcmp(word, "hello-argv") == 0, "thread %d: argv[1] '%s'", id, word ? word : "(null)");

    a->out = a->in * 2 + id; /* through a pointer to main's stack */
    written[id] = 1000 + id;
    ran_on[id] = agora_rank();

    /* My own stack: a local array passed to a helper (and touched a lot). */
    long local[512];
    for (int i = 0; i < 512; i++)
        local[i] = i * id;
    long sum = 0;
    for (int i = 0; i < 512; i++)
        sum += local[i];
    CHECK(sum == 512L * 511 / 2 * id, "thread %d: local sum %ld", id, sum);

    /* The heap: a node homed here, reached by main through a global. */
    struct node *n = malloc(sizeof *n);
    CHECK(n && agora_is_global(n), "thread %d: malloc gave %p", id, (void *)n);
    n->value = id;
    CHECK(agora_lock(&lock) == AGORA_OK, "thread %d: lock", id);
    n->next = list_head;
    list_head = n;
    pushed++;
    CHECK(agora_unlock(&lock) == AGORA_OK, "thread %d: unlock", id);

    /* realloc of main's block (homed on rank 0) from this rank. */
    for (int i = 0; i < BUF0; i++)
        CHECK(bufs[id][i] == (unsigned char)(id + i), "thread %d: buf[%d]", id, i);
    unsigned char *b = realloc(bufs[id], BUF1);
    CHECK(b, "thread %d: realloc", id);
    for (int i = 0; i < BUF0; i++)
        CHECK(b[i] == (unsigned char)(id + i), "thread %d: realloc'd [%d]", id, i);
    for (int i = BUF0; i < BUF1; i++)
        b[i] = (unsigned char)(id * 3 + i);
    bufs[id] = b;

    long *z = calloc(1000, sizeof(long));
    CHECK(z, "thread %d: calloc", id);
    for (int i = 0; i < 1000; i++)
        CHECK(z[i] == 0, "thread %d: calloc'd [%d] = %ld", id, i, z[i]);
    free(z);
    void *big = NULL;
    CHECK(posix_memalign(&big, 4096, 10000) == 0 && ((uintptr_t)big & 4095) == 0, "thread %d: posix_memalign", id);
    free(big);
    return (void *)(intptr_t)(id + 1);
}

int main(int argc, char **argv)
{
    CHECK(agora_program_mode(), "not in program mode");
    CHECK(agora_init(&argc, &argv) == AGORA_OK, "agora_init again");
    CHECK(agora_rank() == 0, "main on rank %d", agora_rank());
    CHECK(argc >= 2, "usage: shared WORD [THREADS]");
    CHECK(agora_is_global(&magic) && agora_is_global(table) && agora_is_global(&argc), "globals or stack not global");
    /* With memory servers (the ranks after the program's) a server homes them. */
    const char *servers = getenv("AGORA_MEMORY_SERVERS");
    if (servers && atoi(servers) > 0)
        CHECK(agora_home_of(&magic) >= agora_nranks(), "globals homed on %d, not on a server", agora_home_of(&magic));
    else
        CHECK(agora_home_of(&magic) == 0, "globals homed on %d", agora_home_of(&magic));
    word = argv[1];
    nthreads = argc > 2 ? atoi(argv[2]) : 2 * agora_nranks() + 1;
    CHECK(nthreads >= 1 && nthreads <= MAX_THREADS, "bad thread count %d", nthreads);
    for (long i = 0; i < TABLE; i++)
        table[i] = i * 3;
    results = malloc(nthreads * sizeof(double));
    CHECK(results, "malloc");
    for (int i = 0; i < nthreads; i++)
        results[i] = i * 0.5;
    message = strdup("a message from main");
    *static_counter() = 107;
    agora_lock_t *l = test_lock_create();
    CHECK(l, "agora_lock_create");
    lock = *l;

    struct args args[MAX_THREADS];
    agora_thread_t t[MAX_THREADS];
    for (int i = 0; i < nthreads; i++) {
        args[i].id = i;
        args[i].in = i * 100;
        args[i].out = -1;
        bufs[i] = malloc(BUF0);
        CHECK(bufs[i], "malloc");
        for (int k = 0; k < BUF0; k++)
            bufs[i][k] = (unsigned char)(i + k);
    }
    for (int i = 0; i < nthreads; i++)
        CHECK(agora_thread_create(&t[i], worker, &args[i]) == AGORA_OK, "create %d", i);
    for (int i = 0; i < nthreads; i++) {
        void *ret = NULL;
        CHECK(agora_thread_join(t[i], &ret) == AGORA_OK, "join %d", i);
        CHECK((intptr_t)ret == i + 1, "thread %d returned %ld", i, (long)(intptr_t)ret);
    }
    int other_rank = 0;
    for (int i = 0; i < nthreads; i++) {
        CHECK(args[i].out == i * 200 + i, "args[%d].out = %ld", i, args[i].out);
        CHECK(written[i] == 1000 + i, "written[%d] = %ld", i, written[i]);
        other_rank |= ran_on[i] != 0;
        for (int k = 0; k < BUF0; k++)
            CHECK(bufs[i][k] == (unsigned char)(i + k), "bufs[%d][%d]", i, k);
        for (int k = BUF0; k < BUF1; k++)
            CHECK(bufs[i][k] == (unsigned char)(i * 3 + k), "bufs[%d][%d] = %d", i, k, bufs[i][k]);
        free(bufs[i]);
    }
    CHECK(other_rank || agora_nranks() == 1, "no thread ran on another rank");
    /* Under regc a span's stores travel with its lock (Samhita/RegC, rule 2):
     * without memory servers main's rank homes the globals and sees them at
     * the home; with servers it takes the lock to see them. */
    const char *proto = getenv("AGORA_PROTOCOL");
    if (proto && !strncmp(proto, "regc", 4) && servers && atoi(servers) > 0) {
        agora_lock(&lock);
        agora_unlock(&lock);
    }
    long count = 0, sum = 0;
    while (list_head) {
        struct node *n = list_head;
        list_head = n->next;
        count++;
        sum += n->value;
        free(n); /* homed where the thread ran */
    }
    CHECK(count == nthreads && pushed == nthreads, "list has %ld nodes, %ld pushed", count, pushed);
    CHECK(sum == (long)nthreads * (nthreads - 1) / 2, "list sum %ld", sum);
    free(results);
    free(message);
    CHECK(agora_finalize() == AGORA_OK, "agora_finalize in program mode");
    printf("PASS program shared: %d threads on %d ranks (%s)\n", nthreads, agora_nranks(), agora_protocol_name());
    return 0;
}
