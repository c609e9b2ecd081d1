// agora-microbench: latency of the protocol's basic operations on 2 ranks,
// next to their floors measured in the same run (a local SIGSEGV+mprotect
// round trip, a raw MPI 4 KiB fetch), and what the service design costs a
// computing rank. Writes medians and p99 as JSON.
//
//   agorarun -n 2 build/bin/agora-microbench [--json FILE] [--reps N]
#include <mpi.h>
#include <signal.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agora/agora.h"

namespace {

// Collective placed allocation that must succeed.
void *alloc_placed(size_t bytes, agora_placement_t placement, int rank) {
  void *p = nullptr;
  agora_status_t status = agora_mem_alloc_placed(bytes, placement, rank, &p);
  if (status != AGORA_OK) {
    std::fprintf(stderr, "microbench: agora_mem_alloc_placed(%zu): %s\n", bytes, agora_strerror(status));
    std::exit(1);
  }
  return p;
}

constexpr size_t kPage = 4096;

double now() { return agora_wtime(); }

struct Summary {
  double median, p99;
};
Summary summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[std::min(us.size() - 1, us.size() * 99 / 100)]};
}

// ---- floors (before agora_init: nothing else uses MPI or SIGSEGV) ----------
char *g_floor_page;
void floor_handler(int, siginfo_t *, void *) { mprotect(g_floor_page, kPage, PROT_READ | PROT_WRITE); }

std::vector<double> floor_fault(int reps) {
  g_floor_page = (char *)mmap(nullptr, kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  struct sigaction sa {
  }, old{};
  sa.sa_sigaction = floor_handler;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, &old);
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    mprotect(g_floor_page, kPage, PROT_NONE);
    double t0 = now();
    *(volatile char *)g_floor_page = 1;
    us.push_back((now() - t0) * 1e6);
  }
  sigaction(SIGSEGV, &old, nullptr);
  munmap(g_floor_page, kPage);
  return us;
}

// Rank 0 asks rank 1 for 4 KiB with raw MPI: the least a remote page fetch costs.
std::vector<double> floor_mpi_fetch(int reps, int me) {
  std::vector<char> page(kPage + 32);
  std::vector<double> us;
  char req[32] = {};
  for (int i = 0; i < reps; ++i) {
    if (me == 0) {
      double t0 = now();
      MPI_Send(req, 32, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(page.data(), (int)page.size(), MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      us.push_back((now() - t0) * 1e6);
    } else if (me == 1) {
      MPI_Recv(req, 32, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(page.data(), (int)page.size(), MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
  }
  return us;
}

// An 8-byte MPI_Send/MPI_Recv round trip between the ranks: the least one
// lock request and its grant can cost (issue 29: lock hand-off vs MPI).
std::vector<double> floor_mpi_roundtrip(int reps, int me) {
  std::vector<double> us;
  long word = 0;
  for (int i = 0; i < reps; ++i) {
    if (me == 0) {
      double t0 = now();
      MPI_Send(&word, 1, MPI_LONG, 1, 3, MPI_COMM_WORLD);
      MPI_Recv(&word, 1, MPI_LONG, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      us.push_back((now() - t0) * 1e6);
    } else if (me == 1) {
      MPI_Recv(&word, 1, MPI_LONG, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&word, 1, MPI_LONG, 0, 4, MPI_COMM_WORLD);
    }
  }
  return us;
}

// Both ranks take one lock `reps` times each, updating a counter and a
// last-holder word inside it (homed on rank 0), so each hand-off to the other
// rank must carry the holder's writes: the protocol's cost per hand-off, not
// only the lock manager's. The counter checks that no update was lost.
struct Handoff {
  double seconds;
  long acquires, handoffs;
  bool counter_exact;
};
Handoff lock_handoff(agora_lock_t *lock, int reps, int me) {
  struct Shared {
    long counter, last_holder, handoffs;
  };
  auto *shared = (Shared *)alloc_placed(sizeof(Shared), AGORA_PLACE_RANK, 0);
  if (me == 0) *shared = {0, -1, 0};
  agora_barrier();
  double t0 = now();
  for (int i = 0; i < reps; ++i) {
    agora_lock(lock);
    shared->counter++;
    if (shared->last_holder != me) {
      shared->handoffs++;
      shared->last_holder = me;
    }
    agora_unlock(lock);
  }
  agora_barrier();
  double seconds = now() - t0;
  agora_lock(lock);  // acquire: see the last holder's writes
  Handoff result{seconds, shared->counter, shared->handoffs, shared->counter == 2L * reps};
  agora_unlock(lock);
  agora_barrier();
  return result;
}

// A fixed amount of arithmetic, to measure what a busy core loses.
double compute(long iterations) {
  double x = 1.0;
  for (long i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}
volatile double g_sink;

}  // namespace

int main(int argc, char **argv) {
  const char *json = nullptr;
  int reps = 2000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: agora-microbench [--json FILE] [--reps N]\n");
      return 2;
    }
  }
  // Same MPI settings as agora_init would choose, so the floor is comparable.
  setenv("OMPI_MCA_btl_vader_eager_limit", "8192", 0);
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (np != 2) {
    if (me == 0) std::fprintf(stderr, "agora-microbench runs on exactly 2 ranks (agorarun -n 2)\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<double> f_fault = floor_fault(reps);
  std::vector<double> f_mpi = floor_mpi_fetch(reps, me);
  std::vector<double> f_roundtrip = floor_mpi_roundtrip(reps, me);
  // Compute time with no runtime at all: the busy-core baseline.
  const long work = 20'000'000;
  std::vector<double> bare;
  for (int i = 0; i < 5; ++i) {
    double t0 = now();
    g_sink = compute(work);
    bare.push_back(now() - t0);
  }

  // Each fault figure is the latency of one miss: the pages are read in
  // order, which prefetch would turn into hits (AGORA_PREFETCH=0 unless the
  // caller says otherwise).
  setenv("AGORA_PREFETCH", "0", 0);
  agora_init(&argc, &argv);

  // Remote read fault: pages homed on rank 1, which initialises them (as an
  // owner-computes program does), cold on rank 0, which reads one word each.
  char *far = (char *)alloc_placed(reps * kPage, AGORA_PLACE_RANK, 1);
  if (me == 1)
    for (int i = 0; i < reps; ++i) far[i * kPage] = 1;
  agora_barrier();
  std::vector<double> read_us;
  if (me == 0)
    for (int i = 0; i < reps; ++i) {
      double t0 = now();
      g_sink = *(volatile char *)(far + i * kPage);
      read_us.push_back((now() - t0) * 1e6);
    }
  agora_barrier();

  // Invalidating write: pages homed on rank 0, read by rank 1 (a shared copy
  // there), then written by rank 0, which must invalidate rank 1's copy.
  char *near = (char *)alloc_placed(reps * kPage, AGORA_PLACE_RANK, 0);
  if (me == 0)
    for (int i = 0; i < reps; ++i) near[i * kPage] = 0;
  agora_barrier();
  if (me == 1)
    for (int i = 0; i < reps; ++i) g_sink = *(volatile char *)(near + i * kPage);
  agora_barrier();
  std::vector<double> write_us;
  if (me == 0)
    for (int i = 0; i < reps; ++i) {
      double t0 = now();
      *(volatile char *)(near + i * kPage) = 1;
      write_us.push_back((now() - t0) * 1e6);
    }
  agora_barrier();

  // Uncontended lock managed by rank 1, taken and released by rank 0.
  agora_lock_t locks[2];
  if (agora_lock_array_init(locks, 2) != AGORA_OK) return 1;
  agora_lock_t *remote_lock = &locks[1];  // lock ids are managed round robin: id 1 on rank 1
  std::vector<double> lock_us;
  if (me == 0)
    for (int i = 0; i < reps; ++i) {
      double t0 = now();
      agora_lock(remote_lock);
      agora_unlock(remote_lock);
      lock_us.push_back((now() - t0) * 1e6);
    }
  agora_barrier();
  Handoff handoff = lock_handoff(&locks[1], reps, me);
  if (!handoff.counter_exact) {
    std::fprintf(stderr, "microbench: rank %d: lock hand-off counter %ld, expected %ld: an update was lost\n", me,
                 handoff.acquires, 2L * reps);
    return 1;
  }

  std::vector<double> barrier_us;
  for (int i = 0; i < reps; ++i) {
    double t0 = now();
    agora_barrier();
    barrier_us.push_back((now() - t0) * 1e6);
  }

  // The service design on a busy core: rank 1 computes (never entering the
  // library) while rank 0 faults on pages homed on rank 1. The faults are
  // served by rank 1's service thread; rank 1's compute slows by what that
  // thread takes from its core.
  int busy_reps = std::min(reps, 500);
  char *busy = (char *)alloc_placed(busy_reps * kPage, AGORA_PLACE_RANK, 1);
  if (me == 1)
    for (int i = 0; i < busy_reps; ++i) busy[i * kPage] = 1;
  std::vector<double> busy_us, idle_compute, serving_compute;
  agora_barrier();
  if (me == 1) {
    for (int i = 0; i < 5; ++i) {  // runtime up, nobody asking: the service thread idles
      double t0 = now();
      g_sink = compute(work);
      idle_compute.push_back(now() - t0);
    }
  }
  agora_barrier();
  if (me == 0) {
    for (int i = 0; i < busy_reps; ++i) {
      double t0 = now();
      g_sink = *(volatile char *)(busy + i * kPage);
      busy_us.push_back((now() - t0) * 1e6);
    }
  } else {
    double t0 = now();
    g_sink = compute(work);
    serving_compute.push_back(now() - t0);
  }
  agora_barrier();

  if (me == 0) {
    // Rank 1's compute figures travel in a reduction.
    double r1[2] = {0, 0};
    agora_reduce(r1, 2, AGORA_DOUBLE, AGORA_SUM);
    std::sort(bare.begin(), bare.end());
    double bare_s = bare[bare.size() / 2];
    auto put = [](std::string &s, const char *key, Summary v) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "  \"%s\": {\"median\": %.3f, \"p99\": %.3f},\n", key, v.median, v.p99);
      s += buf;
    };
    std::string out = "{\n";
    char buf[256];
    std::snprintf(buf, sizeof buf, "  \"ranks\": 2,\n  \"reps\": %d,\n  \"service\": \"%s\",\n", reps,
                  std::getenv("AGORA_SERVICE") ? std::getenv("AGORA_SERVICE") : "adaptive");
    out += buf;
    put(out, "remote_read_fault_us", summarize(read_us));
    put(out, "invalidating_write_fault_us", summarize(write_us));
    put(out, "lock_roundtrip_us", summarize(lock_us));
    put(out, "barrier_us", summarize(barrier_us));
    put(out, "floor_fault_us", summarize(f_fault));
    put(out, "floor_mpi_4k_us", summarize(f_mpi));
    put(out, "floor_mpi_roundtrip_us", summarize(f_roundtrip));
    std::snprintf(buf, sizeof buf,
                  "  \"lock_handoff\": {\"protocol\": \"%s\", \"acquires\": %ld, \"handoffs\": %ld, "
                  "\"seconds\": %.4f, \"handoffs_per_s\": %.0f, \"us_per_handoff\": %.3f},\n",
                  agora_protocol_name(), handoff.acquires, handoff.handoffs, handoff.seconds,
                  handoff.handoffs / handoff.seconds, handoff.seconds * 1e6 / std::max(1L, handoff.handoffs));
    out += buf;
    put(out, "remote_read_fault_busy_home_us", summarize(busy_us));
    std::snprintf(buf, sizeof buf,
                  "  \"busy_core_compute_s\": {\"no_runtime\": %.4f, \"runtime_idle\": %.4f, "
                  "\"serving_faults\": %.4f},\n  \"service_idle_overhead_pct\": %.2f\n}\n",
                  bare_s, r1[0], r1[1], 100.0 * (r1[0] - bare_s) / bare_s);
    out += buf;
    std::fputs(out.c_str(), stdout);
    if (json) {
      FILE *f = std::fopen(json, "w");
      if (!f) {
        std::fprintf(stderr, "cannot write %s\n", json);
        return 1;
      }
      std::fputs(out.c_str(), f);
      std::fclose(f);
    }
  } else {
    std::sort(idle_compute.begin(), idle_compute.end());
    double r1[2] = {idle_compute[idle_compute.size() / 2], serving_compute[0]};
    agora_reduce(r1, 2, AGORA_DOUBLE, AGORA_SUM);
  }
  agora_finalize();
  MPI_Finalize();
  return 0;
}
