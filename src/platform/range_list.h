// A few address ranges added at start-up and read without a lock by the
// SIGSEGV handler and by the wrapped system calls (program mode's windows of
// the executable's .data/.bss): a range is published by the count.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace agora::platform {

// Does [a, a+n) overlap [lo, hi)? (Without overflow, for any a and n.)
inline bool range_overlaps(uintptr_t a, size_t n, uintptr_t lo, uintptr_t hi) {
  return n != 0 && a < hi && (a >= lo || n > lo - a);
}

class RangeList {
 public:
  static constexpr int kMax = 4;
  bool add(uintptr_t lo, uintptr_t hi) {
    int n = count_.load(std::memory_order_relaxed);
    if (n == kMax) return false;
    lo_[n] = lo;
    hi_[n] = hi;
    count_.store(n + 1, std::memory_order_release);
    return true;
  }
  void clear() { count_.store(0, std::memory_order_release); }
  bool overlaps(uintptr_t a, size_t n) const {
    int count = count_.load(std::memory_order_acquire);
    for (int i = 0; i < count; ++i)
      if (range_overlaps(a, n, lo_[i], hi_[i])) return true;
    return false;
  }
  bool contains(uintptr_t a) const { return overlaps(a, 1); }

 private:
  uintptr_t lo_[kMax] = {}, hi_[kMax] = {};
  std::atomic<int> count_{0};
};

}  // namespace agora::platform
