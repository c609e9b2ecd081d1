// C++ std::atomic read-modify-writes on shared globals from threads on
// several ranks (issue 26, docs/atomics.md): std::atomic<long>::fetch_add
// and ++, std::atomic<int>::compare_exchange_weak as a spin lock around a
// plain counter, std::atomic_flag as a spin lock, std::atomic<double> by
// compare-exchange, and std::atomic<bool> release/acquire message passing.
// 4 workers on 2 ranks x 2 threads; every result is exact.
#include <pthread.h>

#include <atomic>
#include <cstdio>

namespace {
constexpr int kWorkers = 4;
constexpr int kAdds = 150;
constexpr int kRounds = 20;

std::atomic<long> counter{0};
std::atomic<unsigned long long> wide{0};
std::atomic<int> spin{0};
long spin_protected = 0;
std::atomic_flag flag = ATOMIC_FLAG_INIT;
long flag_protected = 0;
std::atomic<double> real{0.0};

struct alignas(4096) Page {
  long value;
};
Page data;
alignas(4096) std::atomic<bool> ready{false};
alignas(4096) std::atomic<int> answered{0};
long message_errors = 0;

pthread_barrier_t barrier;

void *worker(void *arg) {
  long me = (long)arg;
  // Every rank holds a copy before the phases start (atomics.c says why).
  volatile long sink = counter.load(std::memory_order_relaxed) + spin_protected + flag_protected + data.value;
  (void)sink;
  pthread_barrier_wait(&barrier);
  for (int i = 0; i < kAdds; i++) {
    counter.fetch_add(1);
    counter++;
    wide += 3;
  }
  pthread_barrier_wait(&barrier);
  for (int i = 0; i < kAdds; i++) {
    int expected = 0;
    while (!spin.compare_exchange_weak(expected, 1, std::memory_order_acquire)) expected = 0;
    spin_protected++;
    spin.store(0, std::memory_order_release);
    while (flag.test_and_set(std::memory_order_acquire)) {
    }
    flag_protected++;
    flag.clear(std::memory_order_release);
    double seen = real.load();
    while (!real.compare_exchange_weak(seen, seen + 0.5)) {
    }
  }
  pthread_barrier_wait(&barrier);
  for (int round = 1; round <= kRounds && me < 2; round++) {
    if (me == 0) {
      data.value = round * 7;
      ready.store(true, std::memory_order_release);
      while (answered.load(std::memory_order_acquire) != round) {
      }
    } else {
      while (!ready.exchange(false, std::memory_order_acq_rel)) {
      }
      if (data.value != round * 7 && message_errors++ == 0)
        std::printf("message round %d: data %ld, expected %d\n", round, data.value, round * 7);
      answered.store(round, std::memory_order_release);
    }
  }
  return nullptr;
}

int check(const char *name, double got, double want) {
  if (got == want) return 0;
  std::printf("FAIL %s: %.1f, expected %.1f\n", name, got, want);
  return 1;
}
}  // namespace

int main() {
  pthread_barrier_init(&barrier, nullptr, kWorkers);
  pthread_t t[kWorkers];
  for (long w = 0; w < kWorkers; w++)
    if (pthread_create(&t[w], nullptr, worker, (void *)w) != 0) {
      std::printf("FAIL: pthread_create of worker %ld\n", w);
      return 1;
    }
  for (pthread_t &th : t) pthread_join(th, nullptr);
  int failed = check("fetch_add", counter.load(), 2.0 * kWorkers * kAdds) +
               check("wide", (double)wide.load(), 3.0 * kWorkers * kAdds) +
               check("compare_exchange lock", spin_protected, 1.0 * kWorkers * kAdds) +
               check("atomic_flag lock", flag_protected, 1.0 * kWorkers * kAdds) +
               check("atomic<double>", real.load(), 0.5 * kWorkers * kAdds) + check("message", message_errors, 0);
  if (failed) return 1;
  std::printf("PASS program atomics_cxx\n");
  return 0;
}
