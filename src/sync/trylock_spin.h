// A thread that busy-waits with trylock (`while (pthread_mutex_trylock(&m))
// ;`, or a hand-written barrier that re-reads a generation number under the
// mutex) would ask the lock service on every turn. Each turn is cheap, but
// the spinning threads keep the rank's cores, its runtime lock and (granted
// turns) the lock itself busy, so the holder and the service thread that
// would hand the lock on barely run (issue 26: 118 s where pthreads took
// 1 s). Each thread keeps one of these. A thread that comes straight back
// (within kStraightBackUs of its previous try's end) to try the same lock
// again is spinning, whatever the previous answer was: after kFreeTurns such
// turns it naps before each try, twice as long each time up to kMaxNapUs
// (before, not after: a granted try must not nap holding the lock). A try of
// another lock, or one after a longer pause (the thread did work in
// between), starts over. A trylock still never waits for the lock, and a
// release is noticed at most one nap late.
#pragma once
#include <cstdint>

namespace agora {

class TrylockSpin {
 public:
  static constexpr uint32_t kFreeTurns = 2;  // straight-back turns before the first nap
  static constexpr double kStraightBackUs = 50;
  static constexpr uint32_t kMaxNapUs = 200;
  // A try of the lock `key` is called at `now_us` (any monotonic clock, µs):
  // the nap (µs) to take before asking the lock service.
  uint32_t before_try(uint64_t key, double now_us);
  // The try's answer came at `now_us`.
  void after_try(double now_us) { last_end_us_ = now_us; }

 private:
  uint64_t key_ = 0;
  double last_end_us_ = -1e300;
  uint32_t turns_ = 0;
};

}  // namespace agora
