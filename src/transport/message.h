// Active messages: a fixed header naming the receiving component (channel)
// and operation, with up to three integer arguments, plus an optional
// payload. Both hosts' networks (MPI, the simulator's) deliver messages
// between one pair of ranks in the order they were sent; different pairs are
// not ordered.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/types.h"

namespace agora {

enum class Channel : uint16_t {
  Protocol = 1,
  Lock = 2,
  Barrier = 3,
  Reduce = 4,
  Memory = 5,
  Thread = 6,
  Watch = 7,
  ThreadBarrier = 8,
  Semaphore = 9,
  Condition = 10,
  ThreadReduce = 11,
  Gptr = 12,
  RankCall = 13,  // calls run on another rank (src/runtime/rank_calls/)
  Server = 20     // memory servers (src/runtime/runtime_server.cpp)
};

struct MsgHeader {
  Channel channel;
  uint16_t op;
  Rank src;
  uint64_t a, b, c;
};
static_assert(sizeof(MsgHeader) == 32);

struct Payload {
  const std::byte *data = nullptr;
  size_t size = 0;
};

// A blocked caller (faulting thread, lock or barrier waiter). A component
// completes it; the blocked thread polls done(), or sleeps in
// sleep_until_done() while another thread (the rank's service thread)
// delivers the messages. One state word, so that complete() never touches the
// waiter after the sleeper may have seen it done and returned (it lives on
// the sleeper's stack).
//
// Components never call the OS: the host that lets threads sleep (the
// runtime) installs how to wake one (a futex) in waiter_wake; the simulator
// never sleeps and leaves it unset.
using WaiterWake = void (*)(std::atomic<uint32_t> *state);
using WaiterSleep = void (*)(std::atomic<uint32_t> *state, uint32_t while_equal);
inline std::atomic<WaiterWake> waiter_wake{nullptr};

struct Waiter {
  static constexpr uint32_t kPending = 0, kSleeping = 1, kDone = 2;
  int status = 0;  // 0 or a negative agora_status_t, written before done
  std::atomic<uint32_t> state{kPending};

  bool done() const { return state.load(std::memory_order_acquire) == kDone; }
  void reset() { state.store(kPending, std::memory_order_relaxed); }  // for reuse (simulator)
  void complete(int s) {
    status = s;
    // Only a waiter that announced its sleep costs a wake-up.
    if (state.exchange(kDone, std::memory_order_acq_rel) == kSleeping)
      waiter_wake.load(std::memory_order_relaxed)(&state);
  }
  // Requires waiter_wake to be set. True if the thread announced its sleep,
  // and so complete() called waiter_wake for it.
  bool sleep_until_done(WaiterSleep sleep) {
    uint32_t s = state.load(std::memory_order_acquire);
    bool announced = false;
    while (s != kDone) {
      if (s == kSleeping || state.compare_exchange_weak(s, kSleeping, std::memory_order_acquire)) {
        announced = true;
        sleep(&state, kSleeping);
        s = state.load(std::memory_order_acquire);
      }
    }
    return announced;
  }
};

struct Stats;

// What the runtime (or the simulator) offers the components it drives:
// protocol engines and sync services. Components never block; they send,
// and complete waiters.
class ComponentHost {
 public:
  virtual ~ComponentHost() = default;
  virtual Rank rank() const = 0;
  virtual Rank nranks() const = 0;
  // Copies header and payload; the caller may reuse them at once.
  // header.src is filled in by the host.
  virtual void send(Rank dst, MsgHeader header, Payload payload = {}) = 0;
  // A message that asks dst to act now (serve a page, invalidate, manage a
  // lock) while dst's threads may be computing: the host may also wake
  // dst's service. Replies to a thread that is already waiting use send().
  virtual void send_request(Rank dst, MsgHeader header, Payload payload = {}) { send(dst, header, payload); }
  // A message about the job rather than of it (the hang watch): kept out of
  // the statistics and of the message counts the hang watch compares.
  virtual void send_control(Rank dst, MsgHeader header, Payload payload = {}) { send(dst, header, payload); }
  virtual Stats &stats() = 0;
};

}  // namespace agora
