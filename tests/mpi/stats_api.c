/* agora_stats_get / agora_stats_reset on real ranks: counts that must move,
 * a reset that zeroes, the job scope (sums, and peaks as maxima: the ranks
 * are made to reach different notices_kept_peak under hlrc), misuse. */
#include <string.h>

#include "check.h"

static agora_stats_t rank_stats(void)
{
    agora_stats_t s;
    int rc = agora_stats_get(&s, AGORA_STATS_RANK);
    CHECK(rc == AGORA_OK, "agora_stats_get(RANK) returned %d (%s)", rc, agora_strerror(rc));
    return s;
}

static int64_t reduced(int64_t v, agora_op_t op)
{
    CHECK(agora_reduce(&v, 1, AGORA_INT64, op) == AGORA_OK, "agora_reduce failed");
    return v;
}

int main(int argc, char **argv)
{
    CHECK(agora_init(&argc, &argv) == AGORA_OK, "agora_init failed");
    int me = agora_rank(), n = agora_nranks();
    CHECK(n >= 2, "needs at least 2 ranks");
    int hlrc = strcmp(agora_protocol_name(), "hlrc") == 0;

    /* Misuse is refused with a status, not a crash. */
    CHECK(agora_stats_get(NULL, AGORA_STATS_RANK) == AGORA_ERR_INVALID_ARGUMENT, "NULL out accepted");
    agora_stats_t s;
    CHECK(agora_stats_get(&s, 7) == AGORA_ERR_INVALID_ARGUMENT, "scope 7 accepted");

    /* Reset zeroes what this rank's threads count (the service thread may
     * still send a message for another rank meanwhile: messages aside). */
    long *page = test_alloc_placed(4096, AGORA_PLACE_RANK, 0);
    CHECK(page != NULL, "agora_alloc_placed failed");
    if (me == 0) page[0] = 42;
    CHECK(agora_barrier() == AGORA_OK, "barrier");
    CHECK(agora_stats_reset() == AGORA_OK, "agora_stats_reset");
    s = rank_stats();
    CHECK(s.read_faults == 0 && s.write_faults == 0 && s.pages_fetched == 0 && s.lock_acquires == 0 &&
              s.barriers == 0 && s.fault_time_s == 0 && s.sync_time_s == 0 && s.notices_kept_peak == 0,
          "after reset: read_faults %llu write_faults %llu pages_fetched %llu locks %llu barriers %llu",
          (unsigned long long)s.read_faults, (unsigned long long)s.write_faults, (unsigned long long)s.pages_fetched,
          (unsigned long long)s.lock_acquires, (unsigned long long)s.barriers);

    /* A remote read faults and fetches the page on the reader. */
    if (me == 1) {
        CHECK(page[0] == 42, "read %ld, expected 42", page[0]);
        s = rank_stats();
        CHECK(s.read_faults >= 1 && s.pages_fetched >= 1 && s.fault_time_s > 0,
              "after a remote read: read_faults %llu pages_fetched %llu fault_time_s %g",
              (unsigned long long)s.read_faults, (unsigned long long)s.pages_fetched, s.fault_time_s);
    }
    CHECK(agora_barrier() == AGORA_OK, "barrier");
    s = rank_stats();
    CHECK(s.barriers >= 1, "barriers %llu after a barrier", (unsigned long long)s.barriers);

    /* Different peaks (hlrc, 3 ranks or more): ranks 0 and 1 write under one
     * lock, taking turns (a turn word under the lock; left to the scheduler,
     * one writer sometimes took every round before the other asked, and all
     * three ranks ended with the same peak), so each hand-off makes the
     * giver close an interval, which both then keep (rank 2 has not seen
     * them: they cannot be collected before the next barrier); rank 2 keeps
     * fewer. */
    agora_lock_t *lock = test_lock_create();
    long *words = test_alloc(4096 * (size_t)n);
    CHECK(lock && words, "lock or allocation failed");
    const int rounds = 4, writers = 2;
    long *turn = &words[511]; /* rank 0's page, apart from the counted words */
    int64_t my_locks = 0;
    for (int i = 0; me < writers && i < rounds;) {
        CHECK(agora_lock(lock) == AGORA_OK, "lock");
        my_locks++;
        if (*turn % writers == me) {
            words[512 * ((me + 1) % n) + i]++; /* a page homed on another rank */
            ++*turn;
            ++i;
        }
        CHECK(agora_unlock(lock) == AGORA_OK, "unlock");
    }
    agora_stats_t mine = rank_stats(), job;
    int rc = agora_stats_get(&job, AGORA_STATS_JOB);
    CHECK(rc == AGORA_OK, "agora_stats_get(JOB) returned %d (%s)", rc, agora_strerror(rc));
    int64_t peak_max = reduced((int64_t)mine.notices_kept_peak, AGORA_MAX);
    int64_t peak_min = reduced((int64_t)mine.notices_kept_peak, AGORA_MIN);
    int64_t peak_sum = reduced((int64_t)mine.notices_kept_peak, AGORA_SUM);
    int64_t faults = reduced((int64_t)(mine.read_faults + mine.write_faults), AGORA_SUM);
    int64_t acquired = reduced((int64_t)mine.lock_acquires, AGORA_SUM);
    int64_t locked = reduced(my_locks, AGORA_SUM);
    CHECK(job.notices_kept_peak == (uint64_t)peak_max, "job notices_kept_peak %llu, ranks' maximum %lld (sum %lld)",
          (unsigned long long)job.notices_kept_peak, (long long)peak_max, (long long)peak_sum);
    if (hlrc && n >= 3)
        CHECK(peak_min < peak_max && peak_max > 0, "hlrc: ranks' peaks should differ: min %lld max %lld",
              (long long)peak_min, (long long)peak_max);
    CHECK(job.read_faults + job.write_faults == (uint64_t)faults, "job faults %llu, ranks' sum %lld",
          (unsigned long long)(job.read_faults + job.write_faults), (long long)faults);
    CHECK(job.lock_acquires == (uint64_t)acquired && acquired == locked && locked >= writers * rounds,
          "job lock_acquires %llu, ranks' sum %lld, expected the %lld agora_lock calls (at least %d)",
          (unsigned long long)job.lock_acquires, (long long)acquired, (long long)locked, writers * rounds);
    CHECK(job.pages_fetched >= 1 && job.sync_time_s > 0, "job pages_fetched %llu sync_time_s %g",
          (unsigned long long)job.pages_fetched, job.sync_time_s);
    if (me == 0)
        printf("peaks: min %lld max %lld sum %lld; job peak %llu\n", (long long)peak_min, (long long)peak_max,
               (long long)peak_sum, (unsigned long long)job.notices_kept_peak);
    CHECK(agora_barrier() == AGORA_OK, "barrier");
    PASS("stats_api");
    return agora_finalize() == AGORA_OK ? 0 : 1;
}
