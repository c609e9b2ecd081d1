// A C++ pthreads program: a global std::vector built by a static
// constructor, per-thread results in objects made with `new` and handed to
// main through a global container that several threads grow under a mutex,
// std::string names, and `delete` by another thread than the one that
// allocated. Nothing in it knows about Agora.
//
//   cxx_histogram [values] [threads]
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {
constexpr int kBuckets = 64;
constexpr int kMaxThreads = 64;

struct Partial {
  std::string name;
  std::vector<long> counts;
  long values = 0;
};

std::vector<unsigned> samples = [] {  // a static constructor fills it before main
  std::vector<unsigned> v;
  for (unsigned i = 0; i < 4096; i++) v.push_back(i * 2654435761u);
  return v;
}();
std::vector<Partial *> partials;  // grown by the threads under partials_lock
pthread_mutex_t partials_lock = PTHREAD_MUTEX_INITIALIZER;
long nvalues = 1 << 20;
int nthreads;

unsigned value_at(long i) { return samples[i % samples.size()] ^ (unsigned)(i * 40503u); }

void *worker(void *arg) {
  long id = (long)arg;
  auto *p = new Partial;
  p->name = "worker-" + std::to_string(id);
  p->counts.assign(kBuckets, 0);
  for (long i = id; i < nvalues; i += nthreads) {
    p->counts[value_at(i) % kBuckets]++;
    p->values++;
  }
  pthread_mutex_lock(&partials_lock);
  partials.push_back(p);  // may reallocate: memory another thread made
  pthread_mutex_unlock(&partials_lock);
  return nullptr;
}
}  // namespace

int main(int argc, char **argv) {
  if (argc > 1) nvalues = atol(argv[1]);
  nthreads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (nvalues < 1 || nthreads < 1 || nthreads > kMaxThreads) {
    std::fprintf(stderr, "usage: %s [values >= 1] [threads 1..%d]\n", argv[0], kMaxThreads);
    return 2;
  }
  pthread_t tid[kMaxThreads];
  for (long t = 0; t < nthreads; t++)
    if (pthread_create(&tid[t], nullptr, worker, (void *)t) != 0) {
      std::perror("pthread_create");
      return 1;
    }
  for (int t = 0; t < nthreads; t++) pthread_join(tid[t], nullptr);

  std::vector<long> total(kBuckets, 0), expect(kBuckets, 0);
  long values = 0, names_ok = 0;
  for (Partial *p : partials) {
    for (int b = 0; b < kBuckets; b++) total[b] += p->counts[b];
    values += p->values;
    names_ok += p->name.rfind("worker-", 0) == 0;
    delete p;  // allocated by a thread, perhaps on another rank
  }
  for (long i = 0; i < nvalues; i++) expect[value_at(i) % kBuckets]++;
  long checksum = 0;
  for (int b = 0; b < kBuckets; b++) checksum += total[b] * (b + 1);
  bool ok = total == expect && values == nvalues && (int)partials.size() == nthreads && names_ok == nthreads;
  std::printf("cxx_histogram values=%ld threads=%d: %s (checksum %ld, %zu partials)\n", nvalues, nthreads,
              ok ? "ok" : "WRONG", checksum, partials.size());
  return ok ? 0 : 1;
}
