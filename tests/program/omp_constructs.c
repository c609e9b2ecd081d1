/* An unmodified OpenMP program (built with agoracc -fopenmp): every
 * construct of docs/openmp.md's table, each checked exactly against what
 * one process gives. The team's threads must run in more than one process
 * (Agora places them over the ranks; with libgomp they all stay in rank 0's
 * process). Prints "PASS program omp_constructs: T threads in P processes". */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "failure_count.h"

#define N 1000
#define MAXT 64

static int hits[N];
static int owner[N];
static int pids[MAXT];
static long order_log[N];
static int order_pos;
static int cond_last;

static void clear_hits(void) { memset(hits, 0, sizeof hits); }

static void check_hits(const char *what, int expected_iterations)
{
    int bad = 0;
    for (int i = 0; i < expected_iterations; i++)
        if (hits[i] != 1) bad++;
    CHECK(bad == 0, "%s: %d iterations not run exactly once", what, bad);
}

static int team_basics(void)
{
    int team = 0, seen[MAXT] = {0};
    int max = omp_get_max_threads();
    CHECK(!omp_in_parallel() && omp_get_level() == 0 && omp_get_num_threads() == 1, "outside a region");
#pragma omp parallel
    {
        int me = omp_get_thread_num();
#pragma omp critical
        seen[me]++;
        pids[me] = (int)getpid();
#pragma omp single
        team = omp_get_num_threads();
        /* in_parallel: inside an active region (more than one thread). */
        CHECK(omp_in_parallel() == (omp_get_num_threads() > 1) && omp_get_level() == 1,
              "in a region: in_parallel %d level %d", omp_in_parallel(), omp_get_level());
        int inner = -1, inner_level = -1;
#pragma omp parallel
        {
            inner = omp_get_num_threads();
            inner_level = omp_get_level();
        }
        CHECK(inner == 1 && inner_level == 2, "nested region: %d threads at level %d (serialised: 1 at 2)", inner,
              inner_level);
    }
    CHECK(team == max, "default team of %d threads, omp_get_max_threads %d", team, max);
    CHECK(omp_get_num_procs() >= 1, "omp_get_num_procs");
    for (int i = 0; i < team; i++)
        CHECK(seen[i] == 1, "thread %d ran the region %d times", i, seen[i]);
    int three = 0;
#pragma omp parallel num_threads(3)
#pragma omp master
    three = omp_get_num_threads();
    CHECK(three == 3, "num_threads(3): %d", three);
    int off = 0, cond = 0;
#pragma omp parallel if (cond)
    off = omp_get_num_threads();
    CHECK(off == 1, "if(0): %d threads", off);
    return team;
}

static void loops(int team)
{
    clear_hits();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++)
        hits[i]++;
    check_hits("static", N);
    clear_hits();
#pragma omp parallel for schedule(static, 7)
    for (int i = 0; i < N; i++) {
        hits[i]++;
        owner[i] = omp_get_thread_num();
    }
    check_hits("static,7", N);
    for (int i = 0; i < N; i++)
        CHECK(owner[i] == (i / 7) % team, "static,7: iteration %d by thread %d", i, owner[i]);
    clear_hits();
#pragma omp parallel for schedule(dynamic, 3)
    for (int i = 0; i < N; i++)
        hits[i]++;
    check_hits("dynamic,3", N);
    clear_hits();
#pragma omp parallel for schedule(guided, 5)
    for (int i = N - 1; i >= 0; i--)
        hits[i]++;
    check_hits("guided,5 downwards", N);
    clear_hits();
    omp_set_schedule(omp_sched_dynamic, 11);
#pragma omp parallel for schedule(runtime)
    for (unsigned long long i = 0; i < N; i += 2)
        hits[i]++;
    for (int i = 0; i < N; i++)
        CHECK(hits[i] == (i % 2 == 0), "runtime ull step 2: iteration %d ran %d times", i, hits[i]);
    clear_hits();
#pragma omp parallel for collapse(2) schedule(auto)
    for (int i = 0; i < 25; i++)
        for (int j = 0; j < 40; j++)
            hits[i * 40 + j]++;
    check_hits("collapse(2)", N);
    int last = -1;
    clear_hits();
#pragma omp parallel for lastprivate(last) schedule(dynamic, 13)
    for (int i = 0; i < N; i++) {
        hits[i]++;
        last = i;
    }
    check_hits("lastprivate", N);
    CHECK(last == N - 1, "lastprivate: %d", last);
    /* lastprivate(conditional:): the value of the last iteration that
     * assigned it (gcc: GOMP_loop_start with a shared block). */
    cond_last = -1;
#pragma omp parallel
#pragma omp for lastprivate(conditional : cond_last) schedule(dynamic, 5)
    for (int i = 0; i < N; i++)
        if (i % 37 == 3) cond_last = i;
    CHECK(cond_last == 965, "lastprivate(conditional:): %d", cond_last);
    /* An inclusive scan (gcc: GOMP_loop_start with a shared block). */
    static long scan_out[N];
    long running = 0;
#pragma omp parallel for reduction(inscan, + : running)
    for (int i = 0; i < N; i++) {
        running += i;
#pragma omp scan inclusive(running)
        scan_out[i] = running;
    }
    for (int i = 0; i < N; i++)
        CHECK(scan_out[i] == (long)i * (i + 1) / 2, "scan: entry %d is %ld, expected %ld", i, scan_out[i],
              (long)i * (i + 1) / 2);
    /* taskloop over an unsigned long long range. */
    clear_hits();
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(64)
    for (unsigned long long i = 0; i < (unsigned long long)team * N / team; i++)
        hits[i]++;
    check_hits("taskloop", N);
    order_pos = 0;
#pragma omp parallel for ordered schedule(dynamic, 2)
    for (int i = 0; i < 200; i++) {
#pragma omp ordered
        order_log[order_pos++] = i;
    }
    CHECK(order_pos == 200, "ordered dynamic: %d entries", order_pos);
    for (int i = 0; i < order_pos; i++)
        CHECK(order_log[i] == i, "ordered dynamic: entry %d is %ld", i, order_log[i]);
    order_pos = 0;
#pragma omp parallel for ordered schedule(static, 3)
    for (long i = 199; i >= 0; i--) {
#pragma omp ordered
        order_log[order_pos++] = i;
    }
    for (int i = 0; i < 200; i++)
        CHECK(order_log[i] == 199 - i, "ordered static: entry %d is %ld", i, order_log[i]);
    /* nowait loops one after another, then a barrier. */
    clear_hits();
#pragma omp parallel
    {
#pragma omp for schedule(dynamic) nowait
        for (int i = 0; i < N / 2; i++)
            hits[i]++;
#pragma omp for schedule(guided) nowait
        for (int i = N / 2; i < N; i++)
            hits[i]++;
#pragma omp barrier
#pragma omp single
        check_hits("nowait loops", N);
    }
}

static void synchronisation(int team)
{
    int counter = 0, named = 0, atomic_count = 0;
    double atomic_sum = 0;
#pragma omp parallel
    for (int k = 0; k < 100; k++) {
#pragma omp critical
        counter++;
#pragma omp critical(other)
        named += 2;
#pragma omp atomic
        atomic_count++;
#pragma omp atomic
        atomic_sum += 0.5;
    }
    CHECK(counter == 100 * team, "critical: %d", counter);
    CHECK(named == 200 * team, "critical(other): %d", named);
    CHECK(atomic_count == 100 * team, "atomic int: %d", atomic_count);
    CHECK(atomic_sum == 50.0 * team, "atomic double: %g", atomic_sum);

    long sum = 0, isum = 0;
    double dsum = 0, prod = 1;
    int maxv = -1, minv = N;
#pragma omp parallel for reduction(+ : sum, dsum) reduction(* : prod) reduction(max : maxv) reduction(min : minv) \
    reduction(^ : isum)
    for (int i = 0; i < N; i++) {
        sum += i;
        dsum += 0.25 * i;
        if (i < 20) prod *= 2;
        maxv = i > maxv ? i : maxv;
        minv = i < minv ? i : minv;
        isum ^= i;
    }
    long xor_expected = 0;
    for (int i = 0; i < N; i++)
        xor_expected ^= i;
    CHECK(sum == (long)N * (N - 1) / 2, "reduction +: %ld", sum);
    CHECK(dsum == 0.25 * N * (N - 1) / 2, "reduction + double: %g", dsum);
    CHECK(prod == 1048576.0, "reduction *: %g", prod);
    CHECK(maxv == N - 1 && minv == 0, "reduction max/min: %d %d", maxv, minv);
    CHECK(isum == xor_expected, "reduction ^: %ld", isum);

    int singles = 0, masters = 0, sections[4] = {0}, copied_ok = 0;
#pragma omp parallel
    {
        for (int k = 0; k < 10; k++) {
#pragma omp single
            singles++;
#pragma omp single nowait
            singles++;
        }
#pragma omp barrier
#pragma omp master
        masters++;
        int value = -1;
#pragma omp single copyprivate(value)
        value = 4242;
        if (value == 4242) {
#pragma omp atomic
            copied_ok++;
        }
#pragma omp sections
        {
#pragma omp section
            sections[0]++;
#pragma omp section
            sections[1]++;
#pragma omp section
            sections[2]++;
#pragma omp section
            sections[3]++;
        }
    }
    CHECK(singles == 20, "single: %d runs", singles);
    CHECK(masters == 1, "master: %d runs", masters);
    CHECK(copied_ok == team, "copyprivate reached %d of %d threads", copied_ok, team);
    for (int s = 0; s < 4; s++)
        CHECK(sections[s] == 1, "section %d ran %d times", s, sections[s]);

    /* Barriers: every thread sees every other's write of the round. */
    static int round_of[MAXT];
    int barrier_bad = 0;
#pragma omp parallel
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads();
        for (int r = 1; r <= 5; r++) {
            round_of[me] = r;
#pragma omp barrier
            for (int i = 0; i < n; i++)
                if (round_of[i] != r) {
#pragma omp atomic
                    barrier_bad++;
                }
#pragma omp barrier
        }
    }
    CHECK(barrier_bad == 0, "barrier: %d stale reads", barrier_bad);

    omp_lock_t lock;
    omp_nest_lock_t nest;
    omp_init_lock(&lock);
    omp_init_nest_lock(&nest);
    int locked = 0, nested = 0;
#pragma omp parallel
    for (int k = 0; k < 50; k++) {
        omp_set_lock(&lock);
        locked++;
        omp_unset_lock(&lock);
        omp_set_nest_lock(&nest);
        omp_set_nest_lock(&nest);
        nested++;
        omp_unset_nest_lock(&nest);
        omp_unset_nest_lock(&nest);
    }
    omp_destroy_lock(&lock);
    omp_destroy_nest_lock(&nest);
    CHECK(locked == 50 * team && nested == 50 * team, "omp locks: %d, nest locks: %d", locked, nested);

    int tasks = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int k = 0; k < 20; k++) {
#pragma omp task
            {
#pragma omp atomic
                tasks++;
            }
        }
#pragma omp taskwait
        CHECK(tasks == 20, "taskwait: %d of 20 tasks done", tasks);
    }
}

int main(void)
{
    double t0 = omp_get_wtime();
    int team = team_basics();
    loops(team);
    synchronisation(team);
    int processes = 0;
    for (int i = 0; i < team && i < MAXT; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= pids[j] == pids[i];
        processes += !seen;
    }
    CHECK(team < 2 || processes >= 2, "the team's %d threads ran in %d process(es): not spread over the ranks", team,
          processes);
    CHECK(omp_get_wtime() >= t0, "omp_get_wtime goes backwards");
    if (failures) {
        printf("FAIL program omp_constructs: %d checks failed\n", failures);
        return 1;
    }
    printf("PASS program omp_constructs: %d threads in %d processes\n", team, processes);
    return 0;
}
