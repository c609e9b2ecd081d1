/* std::thread, std::async (launch::async) and std::jthread in program mode:
 * their threads are spread over the ranks as pthread_create's are; a
 * counter under a std::mutex is exact; std::thread::get_id() matches the
 * thread's own std::this_thread::get_id(); join, detach and their errors
 * behave as libstdc++'s; std::condition_variable waits and notifies
 * across ranks; hardware_concurrency() is the job's slots.
 *
 * std_thread [THREADS] */
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <vector>

#include <agora/agora.h>

#include "../mpi/check.h"

namespace {

constexpr int kMax = 16;
constexpr int kAdds = 200;

std::mutex counter_mutex;
long counter;
int thread_rank[kMax];
std::thread::id inside_id[kMax];
int jthread_rank = -1;
std::condition_variable go_cv;        // under counter_mutex
std::condition_variable_any done_cv;  // under counter_mutex
bool go;
int done;
std::thread *self_thread;  // a thread that joins itself
bool self_ready;           // under counter_mutex
int self_join;             // 1: resource_deadlock_would_occur; 2: another error; 3: no error
int detached_rank = -1;    // under counter_mutex

void work(int i) {
  thread_rank[i] = agora_rank();
  inside_id[i] = std::this_thread::get_id();
  for (int k = 0; k < kAdds; ++k) {
    std::lock_guard<std::mutex> hold(counter_mutex);
    ++counter;
  }
}

/* Waits for main's go, then reports back: std::condition_variable across ranks. */
void waiter(int i) {
  std::unique_lock<std::mutex> hold(counter_mutex);
  go_cv.wait(hold, [] { return go; });
  counter += i + 1;
  ++done;
  done_cv.notify_one();
}

int async_work(int i) {
  for (int k = 0; k < kAdds; ++k) {
    std::lock_guard<std::mutex> hold(counter_mutex);
    ++counter;
  }
  return agora_rank() * 1000 + i;
}

}  // namespace

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 4;
  CHECK(n >= 2 && n <= kMax, "THREADS between 2 and %d", kMax);
  bool spread = agora_nranks() > 1;

  /* std::thread: spread, ids agree, an exact counter. */
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(work, i);
  std::vector<std::thread::id> outside_id;
  for (auto &t : threads) outside_id.push_back(t.get_id());
  for (auto &t : threads) t.join();
  std::set<int> ranks;
  for (int i = 0; i < n; ++i) {
    ranks.insert(thread_rank[i]);
    CHECK(inside_id[i] == outside_id[i], "thread %d: get_id() differs from its this_thread::get_id()", i);
    CHECK(!threads[i].joinable(), "thread %d joinable after join", i);
  }
  CHECK(counter == (long)n * kAdds, "std::thread counter %ld, want %ld", counter, (long)n * kAdds);
  CHECK(!spread || ranks.size() > 1, "every std::thread ran on rank %d", *ranks.begin());

  /* Joining a thread that is not joinable throws, as libstdc++ does. */
  bool threw = false;
  try {
    threads[0].join();
  } catch (const std::system_error &e) {
    threw = e.code() == std::errc::invalid_argument;
  }
  CHECK(threw, "join of a joined std::thread did not throw invalid_argument");
  std::thread s([] {
    {
      std::unique_lock<std::mutex> hold(counter_mutex);
      go_cv.wait(hold, [] { return self_ready; });
    }
    try {
      self_thread->join();
      self_join = 3;
    } catch (const std::system_error &e) {
      self_join = e.code() == std::errc::resource_deadlock_would_occur ? 1 : 2;
    }
  });
  {
    std::lock_guard<std::mutex> hold(counter_mutex);
    self_thread = &s;
    self_ready = true;
    go_cv.notify_all();
  }
  s.join();
  CHECK(self_join == 1, "a std::thread joining itself: %d, not resource_deadlock_would_occur", self_join);

  /* std::condition_variable: waiters on every rank, woken by main's notify_all. */
  counter = 0;
  std::vector<std::thread> waiters;
  for (int i = 0; i < n; ++i) waiters.emplace_back(waiter, i);
  {
    std::unique_lock<std::mutex> hold(counter_mutex);
    go = true;
    go_cv.notify_all();
    done_cv.wait(hold, [n] { return done == n; });
    CHECK(counter == (long)n * (n + 1) / 2, "condition_variable sum %ld, want %ld", counter, (long)n * (n + 1) / 2);
  }
  for (auto &t : waiters) t.join();

  /* std::async with launch::async: a std::thread inside libstdc++'s headers. */
  counter = 0;
  std::vector<std::future<int>> futures;
  for (int i = 0; i < n; ++i) futures.push_back(std::async(std::launch::async, async_work, i));
  std::set<int> async_ranks;
  for (int i = 0; i < n; ++i) {
    int r = futures[i].get();
    CHECK(r % 1000 == i, "future %d returned %d", i, r);
    async_ranks.insert(r / 1000);
  }
  CHECK(counter == (long)n * kAdds, "std::async counter %ld, want %ld", counter, (long)n * kAdds);
  CHECK(!spread || async_ranks.size() > 1, "every std::async task ran on rank %d", *async_ranks.begin());

  /* std::jthread joins in its destructor. */
  {
    std::jthread j([] { jthread_rank = agora_rank(); });
  }
  CHECK(jthread_rank >= 0, "the jthread did not run before its destructor returned");

  /* A detached thread runs to its end; main waits for its mark. */
  std::thread d([] {
    std::lock_guard<std::mutex> hold(counter_mutex);
    detached_rank = agora_rank();
  });
  d.detach();
  CHECK(!d.joinable(), "a detached std::thread is joinable");
  int seen = -1;
  for (int tries = 0; tries < 10000 && seen < 0; ++tries) {
    {
      std::lock_guard<std::mutex> hold(counter_mutex);
      seen = detached_rank;
    }
    if (seen < 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(seen >= 0, "the detached std::thread did not run within 10 s");

  unsigned hc = std::thread::hardware_concurrency();
  CHECK(hc == (unsigned)agora_thread_slots(), "hardware_concurrency() = %u, the job has %d slots", hc,
        agora_thread_slots());

  std::printf(
      "PASS program std_thread: %d threads on %zu ranks, %d tasks on %zu ranks, jthread on rank %d, "
      "detached on rank %d\n",
      n, ranks.size(), n, async_ranks.size(), jthread_rank, seen);
  return 0;
}
