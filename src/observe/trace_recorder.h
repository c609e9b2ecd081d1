// One rank's event trace (AGORA_TRACE=DIR; docs/observability.md): a bounded
// buffer of fixed-size records, filled lock-free by any thread and written
// once, at finalize, as Chrome/Perfetto trace-event JSON.
//
// Bounded: the buffer is allocated once (AGORA_TRACE_EVENTS records, default
// kDefaultCapacity) and never grows; events past it are counted as dropped,
// and the file says how many. No MPI and no OS calls here: the hooks
// (observe/observe.h) take the clock and the thread id and hand in records.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace agora {

enum class TraceKind : uint8_t {
  Fault,        // a = page, b = home, c = faulting address, flag = 1 for a write
  LockWait,     // a = lock id (or address of an address-named lock)
  Barrier,      // c = the call's name (a static string): agora_barrier, agora_finalize, ...
  Reduce,       // c = the call's name: agora_reduce, agora_alloc's argument check, ...
  Send,         // peer = destination, bytes = header + payload, channel, flow
  Receive,      // peer = source, bytes, channel, flow: the handler's run
  ServiceWake,  // the service thread woke from naps and served `a` messages; b = last nap (us), flag = rung
  Alloc,        // a = base address, b = bytes, c = AllocKind
  RemoteRead,   // a one-sided read: peer = home, a = first page, b = pages, bytes
};
constexpr int kTraceKinds = 9;
const char *trace_kind_name(TraceKind kind);

// 64 bytes: a million events cost 64 MiB of address space, touched only as
// they are recorded.
struct TraceEvent {
  uint64_t start_ns;  // CLOCK_MONOTONIC
  uint64_t dur_ns;
  uint64_t a, b, c;
  uint64_t flow;  // messages: a job-wide id linking send and receive (0: none)
  int32_t tid;    // kernel thread id
  int32_t peer;   // messages: the other rank
  uint32_t bytes;
  uint16_t channel;
  TraceKind kind;
  uint8_t flag;
};
static_assert(sizeof(TraceEvent) == 64);

class TraceRecorder {
 public:
  static constexpr uint64_t kDefaultCapacity = 1u << 20;
  TraceRecorder(int rank, int nranks, std::string host, uint64_t capacity);

  // Any thread, lock-free: a slot or, when full, one more dropped event.
  void record(const TraceEvent &event) {
    uint64_t slot = next_.fetch_add(1, std::memory_order_relaxed);
    if (slot < capacity_)
      events_[slot] = event;
    else
      dropped_.fetch_add(1, std::memory_order_relaxed);
  }
  // Flow ids: messages between a pair of ranks arrive in the order they were
  // sent (one tag, one communicator), so the k-th message from s to d has
  // the same id on both sides. Every message must be counted on both sides.
  uint64_t next_send_flow(int dst);
  uint64_t next_receive_flow(int src);
  // Names a thread's track ("agora service", "main").
  void name_thread(int tid, const std::string &name);
  // The clocks read together at start, so traces of ranks on different hosts
  // can be aligned by wall time (monotonic clocks differ between hosts).
  void set_clock_reference(uint64_t monotonic_ns, uint64_t wall_ns) {
    clock_monotonic_ns_ = monotonic_ns;
    clock_wall_ns_ = wall_ns;
  }

  uint64_t recorded() const;  // events kept
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t capacity() const { return capacity_; }
  // The whole trace as {"traceEvents": [...], "otherData": {...}}. Call once
  // recording has stopped (no thread records any more).
  void write_json(std::ostream &out) const;

 private:
  int rank_, nranks_;
  std::string host_;
  uint64_t capacity_;
  std::unique_ptr<TraceEvent[]> events_;
  std::atomic<uint64_t> next_{0};
  std::atomic<uint64_t> dropped_{0};
  std::unique_ptr<std::atomic<uint64_t>[]> sent_, received_;  // per peer
  uint64_t clock_monotonic_ns_ = 0, clock_wall_ns_ = 0;
  mutable std::mutex names_mutex_;
  std::vector<std::pair<int, std::string>> thread_names_;
};

}  // namespace agora
