// Active messages: a fixed header naming the receiving component (channel)
// and operation, with up to three integer arguments, plus an optional
// payload. Both transports (mpi, sim) deliver messages between one pair of
// ranks in the order they were sent; different pairs are not ordered.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/types.h"

namespace agora {

enum class Channel : uint16_t {
  Protocol = 1, Lock = 2, Barrier = 3, Reduce = 4, Memory = 5, Thread = 6, Watch = 7
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
// completes it; the blocked thread polls `done`.
struct Waiter {
  int status = 0;  // 0 or a negative agora_status_t, written before done
  std::atomic<bool> done{false};
  void complete(int s) {
    status = s;
    done.store(true, std::memory_order_release);
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
  virtual void send_request(Rank dst, MsgHeader header, Payload payload = {}) {
    send(dst, header, payload);
  }
  // A message about the job rather than of it (the hang watch): kept out of
  // the statistics and of the message counts the hang watch compares.
  virtual void send_control(Rank dst, MsgHeader header, Payload payload = {}) {
    send(dst, header, payload);
  }
  virtual Stats &stats() = 0;
};

}  // namespace agora
