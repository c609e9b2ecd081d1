// Agora for C++: a thin header over the C API (agora.h), nothing it cannot do.
//
//   agora::session    agora_init in the constructor, agora_finalize in the destructor
//   agora::error      thrown by every call that fails: the status and what failed
//   agora::mutex      an agora lock (lock/unlock/try_lock: std::lock_guard,
//                     std::unique_lock and std::scoped_lock work); mutex_ref: a
//                     copyable reference to one, for threads
//   agora::global_array<T>  global memory of n T's with a placement (block,
//                     cyclic, on one rank), freed by its destructor; global_span<T>:
//                     a copyable view of one, for threads
//   agora::thread     std::thread's interface for agora threads: any callable and
//                     arguments, on the rank the placement rule picks or on_rank{r}
//   agora::barrier, agora::reduce, reduce_sum/min/max, rank, nranks, wtime
//
// What crosses to another rank crosses as bytes: a thread's callable and
// arguments (and a global_array's element type) must be trivially copyable,
// and pointers among them mean something on another rank only if they point
// to global memory (a global_span, a mutex_ref, an agora_mem_alloc'd pointer),
// except in programs built with agoracc, where all memory is global.
#ifndef AGORA_AGORA_HPP
#define AGORA_AGORA_HPP

#if __cplusplus < 202002L
#error "agora/agora.hpp needs C++20 (std::span): compile with -std=c++20"
#endif

#include <agora/agora.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace agora {

// ---- errors --------------------------------------------------------------------

// A failed Agora call: status() is what the C function returned, what() names
// the call and the status (the library has also written the details to stderr).
class error : public std::runtime_error {
 public:
  error(agora_status_t status, const std::string &what)
      : std::runtime_error(what + " failed: " + agora_strerror(status)), status_(status) {}
  agora_status_t status() const noexcept { return status_; }

 private:
  agora_status_t status_;
};

namespace detail {
// Throws for a negative status; returns the others (AGORA_OK, AGORA_BUSY, ...).
inline int check(int status, const char *what) {
  if (status < 0) throw error((agora_status_t)status, what);
  return status;
}
}  // namespace detail

// ---- the runtime -----------------------------------------------------------------

// agora_init on construction, agora_finalize on destruction: declare it first
// in main, so that every Agora object of main is gone before finalize.
class session {
 public:
  session(int &argc, char **&argv) { detail::check(agora_init(&argc, &argv), "agora_init"); }
  session(const session &) = delete;
  session &operator=(const session &) = delete;
  // A destructor cannot throw: a failing finalize has written its message,
  // and the job's exit status is the launcher's business.
  ~session() { agora_finalize(); }
};

inline int rank() { return detail::check(agora_rank(), "agora_rank"); }
inline int nranks() { return detail::check(agora_nranks(), "agora_nranks"); }
inline double wtime() { return agora_wtime(); }

// All ranks (one thread per rank, as agora_barrier).
inline void barrier() { detail::check(agora_barrier(), "agora_barrier"); }
// OpenMP flush of an object (or bytes) in global memory, and of everything.
inline void flush(const void *ptr, std::size_t bytes) { detail::check(agora_flush(ptr, bytes), "agora_flush"); }
template <class T>
void flush(const T &object) {
  flush(&object, sizeof(T));
}
inline void flush_all() { detail::check(agora_flush_all(), "agora_flush_all"); }

// ---- reductions (all ranks, as agora_reduce) ------------------------------------

// In place over all ranks; T is std::int64_t or double (agora_reduce's types).
template <class T, std::size_t Extent>
void reduce(std::span<T, Extent> values, agora_op_t op) {
  static_assert(std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>,
                "agora::reduce over a span: the elements must be std::int64_t or double");
  constexpr agora_type_t type = std::is_same_v<T, double> ? AGORA_DOUBLE : AGORA_INT64;
  detail::check(agora_reduce(values.data(), values.size(), type, op), "agora_reduce");
}

// One value of any arithmetic type: integers combine as std::int64_t, floating
// point as double, and the result is converted back to T.
template <class T>
T reduce(T value, agora_op_t op) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                "agora::reduce: the value must be a number (integers combine as int64_t, "
                "floating point as double)");
  if constexpr (std::is_floating_point_v<T>) {
    double v = (double)value;
    reduce(std::span<double>(&v, 1), op);
    return (T)v;
  } else {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t)) {
      if (value > (T)INT64_MAX)
        throw error(AGORA_ERR_INVALID_ARGUMENT, "agora::reduce (an unsigned value above INT64_MAX)");
    }
    std::int64_t v = (std::int64_t)value;
    reduce(std::span<std::int64_t>(&v, 1), op);
    return (T)v;
  }
}
template <class T>
T reduce_sum(T value) {
  return reduce(value, AGORA_SUM);
}
template <class T>
T reduce_min(T value) {
  return reduce(value, AGORA_MIN);
}
template <class T>
T reduce_max(T value) {
  return reduce(value, AGORA_MAX);
}

// ---- locks -----------------------------------------------------------------------

// A reference to an agora lock, copyable and valid on every rank (the handle
// lives in global memory): what a thread gets to use its creator's mutex.
class mutex_ref {
 public:
  explicit mutex_ref(agora_lock_t *handle) noexcept : handle_(handle) {}
  // const, like a reference: a lambda's by-value copy (const) can lock it.
  void lock() const { detail::check(agora_lock(handle_), "agora_lock"); }
  void unlock() const { detail::check(agora_unlock(handle_), "agora_unlock"); }
  bool try_lock() const { return detail::check(agora_trylock(handle_), "agora_trylock") == AGORA_OK; }
  agora_lock_t *native_handle() const noexcept { return handle_; }

 private:
  agora_lock_t *handle_;
};

// An agora lock, initialised by the constructor (agora_lock_init: collective
// in the SPMD model, by one thread in the fork-join model) in a handle in
// global memory, which the destructor frees (the lock must then be free, and
// no mutex_ref to it used again). The destructor does not agora_lock_destroy
// the lock: in the SPMD model each rank destroys its mutex at its own time,
// and the first to do so would drop what the lock's manager keeps while
// other ranks may still use it; call destroy() once no rank will (after a
// barrier, or after the joins in the fork-join model). Move-only. Named like
// std::mutex (a class cannot be called `lock` and have the lock() member
// the standard lock types need).
class mutex {
 public:
  mutex() {
    void *memory = nullptr;
    detail::check(agora_mem_malloc(sizeof(agora_lock_t), &memory), "agora::mutex (agora_mem_malloc of its handle)");
    handle_ = static_cast<agora_lock_t *>(memory);
    if (agora_status_t status = agora_lock_init(handle_)) {
      release();
      throw error(status, "agora_lock_init");
    }
  }
  mutex(const mutex &) = delete;
  mutex &operator=(const mutex &) = delete;
  mutex(mutex &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  mutex &operator=(mutex &&other) noexcept {
    if (this != &other) {
      release();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~mutex() { release(); }

  void lock() { ref().lock(); }
  void unlock() { ref().unlock(); }
  bool try_lock() { return ref().try_lock(); }
  // agora_lock_destroy (AGORA_ERR_MISUSE, thrown, if a thread holds or waits
  // for the lock); the mutex then holds no lock, only its destructor remains.
  void destroy() {
    if (!handle_) throw error(AGORA_ERR_INVALID_ARGUMENT, "agora::mutex::destroy (no lock)");
    detail::check(agora_lock_destroy(handle_), "agora_lock_destroy");
    release();
  }
  mutex_ref ref() const noexcept { return mutex_ref(handle_); }
  agora_lock_t *native_handle() const noexcept { return handle_; }

 private:
  void release() noexcept {
    if (handle_) agora_mem_free(handle_);
    handle_ = nullptr;
  }
  agora_lock_t *handle_ = nullptr;
};

// ---- global arrays ---------------------------------------------------------------

// Where the pages of a global_array are homed (agora_placement_t).
enum class placement {
  block = AGORA_PLACE_BLOCK,    // rank r homes the r-th contiguous 1/N of the pages
  cyclic = AGORA_PLACE_CYCLIC,  // page i on rank i mod N
  rank = AGORA_PLACE_RANK,      // every page on one rank
};

// The tag of a global_array made by one thread (fork-join) rather than by
// every rank together.
struct one_thread_t {
  explicit one_thread_t() = default;
};
inline constexpr one_thread_t one_thread{};

// A view of n T's in global memory: copyable, valid on every rank.
template <class T>
class global_span {
 public:
  global_span() noexcept = default;
  global_span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
  T &operator[](std::size_t i) const noexcept { return data_[i]; }
  T *data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T *begin() const noexcept { return data_; }
  T *end() const noexcept { return data_ + size_; }
  // The rank that homes element i's page.
  int home_of(std::size_t i) const noexcept { return agora_home_of(data_ + i); }
  // [offset, offset + count) of this view.
  global_span subspan(std::size_t offset, std::size_t count) const noexcept {
    return global_span(data_ + offset, count);
  }

 private:
  T *data_ = nullptr;
  std::size_t size_ = 0;
};

// n T's in global memory, zero-filled, homed by a placement, freed by the
// destructor. Move-only.
//
//   global_array<T> a(n, placement::cyclic);   collective: every rank, same
//       arguments, same order (SPMD); every rank gets the same array. The
//       destructor is collective too: a barrier (no rank still uses the
//       memory, and every write has reached its home), then the free.
//   global_array<T> a(one_thread, n, ...);     one thread (fork-join: main, or
//       any agora thread); freed by the destructor on that thread.
//
// Both come from agora_mem_malloc_placed's region (a quarter of AGORA_MEMORY).
template <class T>
class global_array {
  static_assert(std::is_trivially_copyable_v<T>,
                "agora::global_array<T>: T must be trivially copyable (its bytes move between ranks)");

 public:
  global_array() noexcept = default;

  global_array(std::size_t n, placement where = placement::block, int home = 0) : collective_(true) {
    std::size_t bytes = checked_bytes(n, where, home);
    // Rank 0 allocates; agora_reduce hands its pointer to every rank (the
    // others add 0), and a failure (0) to every rank alike.
    // Its status goes the same way, in a second element (0 on the others).
    std::int64_t result[2] = {0, 0};
    if (rank() == 0 && bytes > 0) {
      void *data = nullptr;
      result[1] = agora_mem_malloc_placed(bytes, (agora_placement_t)where, home, &data);
      result[0] = (std::int64_t)(std::intptr_t)data;
    }
    std::int64_t address = 0;
    if (bytes > 0) {
      reduce(std::span<std::int64_t>(result, 2), AGORA_SUM);
      if (result[1] != AGORA_OK)
        throw error((agora_status_t)result[1], "agora::global_array (agora_mem_malloc_placed on rank 0)");
      address = result[0];
    }
    elements_ = global_span<T>((T *)(std::intptr_t)address, n);
  }

  global_array(one_thread_t, std::size_t n, placement where = placement::block, int home = 0) : collective_(false) {
    std::size_t bytes = checked_bytes(n, where, home);
    void *data = nullptr;
    if (bytes > 0)
      detail::check(agora_mem_malloc_placed(bytes, (agora_placement_t)where, home, &data),
                    "agora::global_array (agora_mem_malloc_placed)");
    elements_ = global_span<T>(static_cast<T *>(data), n);
  }

  global_array(const global_array &) = delete;
  global_array &operator=(const global_array &) = delete;
  global_array(global_array &&other) noexcept { take(other); }
  global_array &operator=(global_array &&other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~global_array() { release(); }

  // The element accessors are the view's (global_span).
  T &operator[](std::size_t i) const noexcept { return elements_[i]; }
  T &at(std::size_t i) const {
    if (i >= size()) throw std::out_of_range("agora::global_array::at: index past the end");
    return elements_[i];
  }
  T *data() const noexcept { return elements_.data(); }
  std::size_t size() const noexcept { return elements_.size(); }
  bool empty() const noexcept { return elements_.empty(); }
  T *begin() const noexcept { return elements_.begin(); }
  T *end() const noexcept { return elements_.end(); }
  int home_of(std::size_t i) const noexcept { return elements_.home_of(i); }
  // A copyable view, for threads (the array stays its creator's to free).
  global_span<T> view() const noexcept { return elements_; }

 private:
  static std::size_t checked_bytes(std::size_t n, placement where, int home) {
    if (n > SIZE_MAX / sizeof(T))
      throw error(AGORA_ERR_INVALID_ARGUMENT, "agora::global_array (n * sizeof(T) overflows)");
    if (where != placement::block && where != placement::cyclic && where != placement::rank)
      throw error(AGORA_ERR_INVALID_ARGUMENT, "agora::global_array (unknown placement)");
    // Checked on every rank (the collective form fails alike everywhere).
    if (where == placement::rank && (home < 0 || home >= nranks()))
      throw error(AGORA_ERR_INVALID_ARGUMENT, "agora::global_array (placement::rank on rank " + std::to_string(home) +
                                                  ", not between 0 and " + std::to_string(nranks() - 1) + ")");
    return n * sizeof(T);
  }
  void take(global_array &other) noexcept {
    elements_ = std::exchange(other.elements_, global_span<T>());
    collective_ = other.collective_;
  }
  void release() noexcept {
    if (!data()) return;
    if (collective_) {
      agora_barrier();
      if (agora_rank() == 0) agora_mem_free(data());
    } else {
      agora_mem_free(data());
    }
    elements_ = global_span<T>();
  }

  global_span<T> elements_;
  bool collective_ = false;
};

// ---- threads ---------------------------------------------------------------------

// The rank a thread runs on, when not the placement rule's (agora_thread_create_on).
struct on_rank {
  int rank;
};

// std::thread's interface for an agora thread: thread(f, args...) runs
// f(args...) on the rank agora_thread_create's placement rule picks;
// thread(on_rank{r}, f, args...) on rank r. f's result is dropped, and an
// exception leaving f ends the job (std::terminate on that rank), as with
// std::thread. f and args are copied to global memory, and the new thread
// runs its own copy: they must be trivially copyable (a lambda capturing
// numbers, global_spans and mutex_refs by value is), and f an object, not a
// function pointer (a function's address differs between ranks; wrap it in
// a lambda).
//
// Destroying (or assigning over) a thread that is still joinable prints a
// message naming it and calls std::terminate, as std::thread does: there is
// no detach, and an implicit join could hang where the program did not
// expect to wait.
class thread {
 public:
  thread() noexcept = default;

  template <
      class F, class... Args,
      class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, thread> && !std::is_same_v<std::decay_t<F>, on_rank>>>
  explicit thread(F &&f, Args &&...args) {
    start(-1, std::forward<F>(f), std::forward<Args>(args)...);
  }
  template <class F, class... Args>
  thread(on_rank where, F &&f, Args &&...args) {
    start(where.rank, std::forward<F>(f), std::forward<Args>(args)...);
  }

  thread(const thread &) = delete;
  thread &operator=(const thread &) = delete;
  thread(thread &&other) noexcept : handle_(std::exchange(other.handle_, agora_thread_t{-1, 0, 0})) {}
  thread &operator=(thread &&other) noexcept {
    if (joinable()) abandoned("assigned over");
    handle_ = std::exchange(other.handle_, agora_thread_t{-1, 0, 0});
    return *this;
  }
  ~thread() {
    if (joinable()) abandoned("destroyed");
  }

  bool joinable() const noexcept { return handle_.id != 0; }
  void join() {
    if (!joinable()) throw error(AGORA_ERR_INVALID_ARGUMENT, "agora::thread::join (not joinable)");
    agora_thread_t h = handle_;
    handle_ = agora_thread_t{-1, 0, 0};
    detail::check(agora_thread_join(h, nullptr), "agora_thread_join");
  }
  // The rank the thread runs on (-1 when not joinable).
  int rank() const noexcept { return joinable() ? handle_.rank : -1; }
  agora_thread_t native_handle() const noexcept { return handle_; }

 private:
  template <class Payload>
  static void *run(void *payload) noexcept {
    // This thread's own copy; the one in global memory is freed at once.
    Payload *shared = static_cast<Payload *>(payload);
    Payload local(std::move(*shared));
    shared->~Payload();
    agora_mem_free(payload);
    std::apply([](auto &fn, auto &...args) { fn(std::move(args)...); }, local);
    return nullptr;
  }

  template <class F, class... Args>
  void start(int where, F &&f, Args &&...args) {
    using Fn = std::decay_t<F>;
    static_assert(!std::is_pointer_v<Fn> && !std::is_member_pointer_v<Fn>,
                  "agora::thread: pass a lambda or function object, not a function pointer "
                  "(a function's address differs between ranks): [](auto... a) { f(a...); }");
    static_assert(std::is_trivially_copyable_v<Fn>,
                  "agora::thread: the callable must be trivially copyable (its bytes go to another rank)");
    static_assert((std::is_trivially_copyable_v<std::decay_t<Args>> && ...),
                  "agora::thread: every argument must be trivially copyable (its bytes go to another rank)");
    static_assert(std::is_invocable_v<Fn &, std::decay_t<Args>...>,
                  "agora::thread: the callable cannot be called with these arguments");
    using Payload = std::tuple<Fn, std::decay_t<Args>...>;
    void *memory = nullptr;
    detail::check(agora_mem_malloc(sizeof(Payload), &memory), "agora::thread (agora_mem_malloc of its arguments)");
    new (memory) Payload(std::forward<F>(f), std::forward<Args>(args)...);
    agora_thread_t h{-1, 0, 0};
    int status = where < 0 ? agora_thread_create(&h, &run<Payload>, memory)
                           : agora_thread_create_on(&h, where, &run<Payload>, memory);
    if (status != AGORA_OK) {
      static_cast<Payload *>(memory)->~Payload();
      agora_mem_free(memory);
      throw error((agora_status_t)status, where < 0 ? "agora_thread_create" : "agora_thread_create_on");
    }
    handle_ = h;
  }

  [[noreturn]] void abandoned(const char *how) const noexcept {
    std::fprintf(stderr,
                 "agora::thread %s while joinable (thread %llu on rank %d): join it first; "
                 "terminating, as std::thread does\n",
                 how, (unsigned long long)handle_.id, handle_.rank);
    std::fflush(stderr);
    std::terminate();
  }

  agora_thread_t handle_{-1, 0, 0};
};

}  // namespace agora

#endif  // AGORA_AGORA_HPP
