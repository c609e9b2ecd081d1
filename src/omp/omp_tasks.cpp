// Tasks (docs/openmp.md): every task runs at once, on the thread that
// creates it (an undeferred task, which OpenMP allows for any task), so
// taskwait and taskgroup have nothing left to wait for. Correct, not
// parallel: spreading tasks over the team is future work. detach needs a
// deferred task: refused with a message.
#include <alloca.h>

#include <cstdint>
#include <cstring>

#include "omp/omp_fatal.h"
#include "omp/omp_team.h"

namespace {
// gcc's GOMP_TASK_FLAG_* (libgomp's gomp-constants.h).
constexpr unsigned kTaskDetach = 1u << 9;
constexpr unsigned kTaskUp = 1u << 8;

// The task's data, copied (firstprivate) into a block of the caller's
// stack aligned as asked, then the task run on it.
void run_copied(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
                void (*adjust)(void *, const void *), const void *adjust_arg) {
  if (arg_align < 1) arg_align = 1;
  char *raw = static_cast<char *>(alloca((size_t)arg_size + (size_t)arg_align));
  void *arg = (void *)(((uintptr_t)raw + (uintptr_t)arg_align - 1) & ~((uintptr_t)arg_align - 1));
  if (cpyfn)
    cpyfn(arg, data);
  else if (arg_size > 0)
    memcpy(arg, data, (size_t)arg_size);
  if (adjust) adjust(arg, adjust_arg);
  fn(arg);
}

template <typename T>
struct Range {
  T start, end;
};
template <typename T>
void set_range(void *arg, const void *range) {
  const auto *r = static_cast<const Range<T> *>(range);
  static_cast<T *>(arg)[0] = r->start;
  static_cast<T *>(arg)[1] = r->end;
}
}  // namespace

extern "C" {

void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
               bool if_clause, unsigned flags, void **depend, int priority, void *detach) {
  (void)if_clause;
  (void)depend;  // run in creation order, dependences hold
  (void)priority;
  (void)detach;
  if (flags & kTaskDetach)
    agora::omp::fatal(
        "GOMP_task: a task with the detach clause is not supported by Agora's OpenMP runtime "
        "(tasks run when created; docs/openmp.md)");
  run_copied(fn, data, cpyfn, arg_size, arg_align, nullptr, nullptr);
}

// One task over the whole range: its data starts with the range's bounds.
void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
                   unsigned flags, unsigned long num_tasks, int priority, long start, long end, long step) {
  (void)num_tasks;
  (void)priority;
  (void)step;
  (void)flags;
  (void)kTaskUp;
  Range<long> range{start, end};
  run_copied(fn, data, cpyfn, arg_size, arg_align, set_range<long>, &range);
}

void GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
                       unsigned flags, unsigned long num_tasks, int priority, unsigned long long start,
                       unsigned long long end, unsigned long long step) {
  (void)num_tasks;
  (void)priority;
  (void)step;
  (void)flags;
  Range<unsigned long long> range{start, end};
  run_copied(fn, data, cpyfn, arg_size, arg_align, set_range<unsigned long long>, &range);
}

void GOMP_taskwait(void) {}
void GOMP_taskwait_depend(void **) {}
void GOMP_taskyield(void) {}
void GOMP_taskgroup_start(void) {}
void GOMP_taskgroup_end(void) {}

}  // extern "C"
