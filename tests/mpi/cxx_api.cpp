// include/agora/agora.hpp on real ranks, every piece:
//   SPMD: a cyclic global_array filled by the ranks that home each page and
//   summed by every rank; reduce of values and spans; a counter on one rank
//   behind an agora::mutex through std::lock_guard, std::unique_lock
//   (try_to_lock) and std::scoped_lock; moves; agora::error for bad arguments
//   and for unlocking a mutex not held.
//   Fork-join: rank 0 makes arrays with one_thread and starts 2N agora::threads
//   (N by the placement rule, N on_rank) that sum slices of a cyclic array
//   into a mutex-protected total.
// `cxx_api abandon`: a thread destroyed while joinable ends the job with a
// message (the choice agora.hpp documents).
#include <agora/agora.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace {
int g_failures = 0;
#define CHECK(cond)                                                                                   \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      std::fprintf(stderr, "rank %d: CHECK failed at line %d: %s\n", agora::rank(), __LINE__, #cond); \
      ++g_failures;                                                                                   \
    }                                                                                                 \
  } while (0)

int v_local_for_flush = 0;  // (not in global memory)

void spmd(int me, int n) {
  // ---- a cyclic array, each page written by its home --------------------------------
  const std::size_t N = 100000;  // 196 pages of 4 KiB
  agora::global_array<std::int64_t> a(N, agora::placement::cyclic);
  CHECK(a.size() == N && !a.empty());
  const std::size_t per_page = 4096 / sizeof(std::int64_t);
  for (std::size_t i = 0; i < N; i += 97) CHECK(a.home_of(i) == (int)((i / per_page) % n));
  std::int64_t mine = 0;
  for (std::size_t i = 0; i < N; ++i)
    if (a.home_of(i) == me) {
      a[i] = (std::int64_t)i + 1;
      mine += a[i];
    }
  agora::barrier();
  std::int64_t all = 0;
  for (std::int64_t v : a) all += v;  // begin/end
  const std::int64_t expected = (std::int64_t)(N * (N + 1) / 2);
  CHECK(all == expected);
  CHECK(agora::reduce_sum(mine) == expected);

  // ---- flush: an object, bytes, everything; and misuse as an exception -----------------
  agora::flush(a[me]);
  agora::flush(a.data(), N * sizeof(std::int64_t));
  agora::flush_all();
  bool flush_threw = false;
  try {
    agora::flush(v_local_for_flush);  // not global memory
  } catch (const agora::error &) {
    flush_threw = true;
  }
  CHECK(flush_threw);

  // ---- reductions -------------------------------------------------------------------
  CHECK(agora::reduce_max(me) == n - 1);
  CHECK(agora::reduce_min((double)me + 0.5) == 0.5);
  CHECK(agora::reduce_sum(1u) == (unsigned)n);
  std::array<std::int64_t, 3> v{me, 1, -me};
  agora::reduce(std::span(v), AGORA_SUM);
  CHECK(v[0] == n * (n - 1) / 2 && v[1] == n && v[2] == -n * (n - 1) / 2);

  // ---- a counter on the last rank behind agora::mutex ---------------------------------
  agora::global_array<std::int64_t> counter(2, agora::placement::rank, n - 1);
  CHECK(counter.home_of(0) == n - 1);
  agora::mutex m, m2;
  const int K = 50;
  for (int k = 0; k < K; ++k) {
    std::lock_guard<agora::mutex> hold(m);
    counter[0] += 1;
  }
  int tries = 0;
  for (int k = 0; k < 10; ++k) {
    for (;;) {
      std::unique_lock<agora::mutex> hold(m, std::try_to_lock);
      ++tries;
      if (!hold.owns_lock()) continue;
      counter[0] += 1;
      break;
    }
  }
  for (int k = 0; k < 10; ++k) {
    std::scoped_lock both(m, m2);  // std::lock's deadlock avoidance over try_lock
    counter[0] += 1;
    counter[1] += 2;
  }
  agora::barrier();
  CHECK(counter[0] == (std::int64_t)n * (K + 20));
  CHECK(counter[1] == (std::int64_t)n * 20);
  CHECK(tries >= 10);

  // ---- moves --------------------------------------------------------------------------
  agora::global_array<std::int64_t> moved = std::move(a);
  CHECK(a.size() == 0 && a.data() == nullptr);
  CHECK(moved.size() == N && moved[5] == 6 && moved.at(N - 1) == (std::int64_t)N);
  agora::mutex m3 = std::move(m2);
  CHECK(m2.native_handle() == nullptr && m3.native_handle() != nullptr);

  // ---- errors ---------------------------------------------------------------------------
  bool threw = false;
  try {
    agora::global_array<int> bad(10, agora::placement::rank, n + 3);
  } catch (const agora::error &e) {
    threw = e.status() == AGORA_ERR_INVALID_ARGUMENT && std::strstr(e.what(), "not between 0 and");
  }
  CHECK(threw);
  threw = false;
  try {
    (void)moved.at(N);
  } catch (const std::out_of_range &) {
    threw = true;
  }
  CHECK(threw);
  threw = false;
  try {
    m.unlock();  // not held: the C API says so on stderr, the C++ API throws
  } catch (const agora::error &e) {
    threw = e.status() == AGORA_ERR_NOT_HELD && std::strstr(e.what(), "agora_unlock");
  }
  CHECK(threw);
  agora::barrier();
}  // collective destructors: a barrier each, then rank 0 frees

struct Slice {
  std::size_t first, count;
};

void fork_join(int n) {
  const std::size_t M = 60000;
  agora::global_array<std::int64_t> data(agora::one_thread, M, agora::placement::cyclic);
  for (std::size_t i = 0; i < M; ++i) data[i] = (std::int64_t)i;
  const int T = 2 * n;
  agora::global_array<std::int64_t> total(agora::one_thread, 1, agora::placement::rank, n - 1);
  agora::global_array<int> where(agora::one_thread, T);
  agora::mutex m;

  std::vector<agora::thread> threads;
  auto body = [](agora::global_span<std::int64_t> d, agora::global_span<std::int64_t> sum, agora::global_span<int> at,
                 agora::mutex_ref lock, int t, Slice s) {
    std::int64_t part = 0;
    for (std::int64_t x : d.subspan(s.first, s.count)) part += x;
    std::lock_guard<agora::mutex_ref> hold(lock);
    sum[0] += part;
    at[t] = agora::rank();
  };
  for (int t = 0; t < T; ++t) {
    Slice s{M * t / T, M * (t + 1) / T - M * t / T};
    if (t < n)
      threads.emplace_back(body, data.view(), total.view(), where.view(), m.ref(), t, s);
    else
      threads.emplace_back(agora::on_rank{t % n}, body, data.view(), total.view(), where.view(), m.ref(), t, s);
  }
  // A captured-state lambda with no arguments, on the last rank.
  std::int64_t seven = 7;
  agora::global_span<std::int64_t> sum = total.view();
  agora::mutex_ref lock = m.ref();
  agora::thread extra(agora::on_rank{n - 1}, [=] {
    std::lock_guard hold(lock);  // a const mutex_ref locks too
    sum[0] += seven;
  });
  CHECK(extra.joinable() && extra.rank() == n - 1);
  agora::thread moved_thread = std::move(extra);
  CHECK(!extra.joinable() && moved_thread.joinable());
  moved_thread.join();
  CHECK(!moved_thread.joinable());
  for (auto &t : threads) t.join();

  CHECK(total[0] == (std::int64_t)(M * (M - 1) / 2) + 7);
  for (int t = n; t < T; ++t) CHECK(where[t] == t % n);
  int ranks_used = 0;
  for (int r = 0; r < n; ++r) {
    bool used = false;
    for (int t = 0; t < T; ++t) used = used || where[t] == r;
    ranks_used += used;
  }
  CHECK(ranks_used == n);
  bool threw = false;
  try {
    agora::thread bad(agora::on_rank{n}, [] {});
  } catch (const agora::error &e) {
    threw = e.status() == AGORA_ERR_INVALID_ARGUMENT;
  }
  CHECK(threw);
  threw = false;
  try {
    moved_thread.join();
  } catch (const agora::error &e) {
    threw = e.status() == AGORA_ERR_INVALID_ARGUMENT;
  }
  CHECK(threw);
}
}  // namespace

int main(int argc, char **argv) {
  agora::session session(argc, argv);
  const int me = agora::rank(), n = agora::nranks();
  if (argc > 1 && std::strcmp(argv[1], "abandon") == 0) {
    if (me == 0) agora::thread t([] {});  // destroyed joinable: terminates
    return 0;
  }
  spmd(me, n);
  if (me == 0) fork_join(n);
  if (g_failures == 0 && me == 0)
    std::printf("cxx_api: every check passed on %d ranks (%s)\n", n, agora_protocol_name());
  return g_failures ? 1 : 0;
}
