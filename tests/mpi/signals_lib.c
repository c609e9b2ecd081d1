/* A shared library that installs a SIGSEGV handler, as a runtime or JIT
 * loaded by the program might: its sigaction call must reach Agora's
 * interposer in the executable too (tests/mpi/signals.c). */
#include <signal.h>
#include <string.h>

int signals_lib_install(void (*fn)(int, siginfo_t *, void *), struct sigaction *old)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = fn;
    a.sa_flags = SA_SIGINFO;
    sigemptyset(&a.sa_mask);
    return sigaction(SIGSEGV, &a, old);
}
