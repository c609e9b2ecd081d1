// The runtime's observation hooks: AGORA_TRACE (trace_recorder.h) and
// AGORA_PROFILE (page_profile.h). See docs/observability.md.
//
// Each hook is one line in the runtime: an object whose constructor and
// destructor bracket the operation, or a call. Off (the default), a hook
// costs one relaxed load of g_observers and a null check: no allocation, no
// lock, no clock. On, a trace event costs two clock reads and one atomic
// increment; a profile record one uncontended mutex.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "common/config.h"
#include "memory/collective_runs.h"
#include "observe/page_profile.h"
#include "observe/trace_recorder.h"
#include "transport/message.h"

namespace agora {

struct Observers {
  TraceRecorder *trace = nullptr;  // AGORA_TRACE
  PageProfile *profile = nullptr;  // AGORA_PROFILE
  uint64_t page_size = 0, pages = 0;
};
// Null when neither is on; set at start, cleared at stop.
inline std::atomic<const Observers *> g_observers{nullptr};
inline const Observers *observers() { return g_observers.load(std::memory_order_relaxed); }

// Start (init, after the transport and the address space): checks that the
// files can be written and fails with a message naming the path if not.
bool observe_start(const Config &config, int rank, int nranks, uintptr_t base, uint64_t page_size, uint64_t pages,
                   std::string *error);
// Stop (finalize, once no other thread runs Agora code): writes
// DIR/agora-trace.<rank>.json and agora-profile.<rank>.json, says if events
// were dropped, and frees the buffers.
void observe_stop();
// The calling thread's track name in the trace: name, or "name number"
// when number >= 0 (built only when tracing: nothing allocated when off).
inline void observe_name_thread(const char *name, int64_t number = -1);

uint64_t observe_now_ns();
int observe_thread_id();  // cached per thread

// An operation with a duration: a fault, a lock wait, a barrier, a reduce.
class ObservedSpan {
 public:
  // a, b, c: see TraceKind. A Barrier span also ends the profile's epoch.
  ObservedSpan(TraceKind kind, uint64_t a = 0, uint64_t b = 0, uint64_t c = 0, bool flag = false) : on_(observers()) {
    if (on_) begin(kind, a, b, c, flag);
  }
  ~ObservedSpan() {
    if (on_) end();
  }
  ObservedSpan(const ObservedSpan &) = delete;
  ObservedSpan &operator=(const ObservedSpan &) = delete;

 protected:
  void begin(TraceKind kind, uint64_t a, uint64_t b, uint64_t c, bool flag);
  void end();
  const Observers *on_;
  TraceEvent event_;
};

// A page fault: counted in the profile, traced with page, home, address.
class ObservedFault : public ObservedSpan {
 public:
  ObservedFault(uint64_t page, Rank home, const void *addr, bool is_write)
      : ObservedSpan(TraceKind::Fault, page, (uint64_t)home, (uint64_t)(uintptr_t)addr, is_write) {}
};

// A message: the send call, or the handler's run on receipt (with its
// flow id, and whole pages counted in the profile).
class ObservedMessage {
 public:
  ObservedMessage(bool sent, Rank peer, const MsgHeader &header, Payload payload) : on_(observers()) {
    if (on_) begin(sent, peer, header, payload);
  }
  ~ObservedMessage() {
    if (on_) end();
  }
  ObservedMessage(const ObservedMessage &) = delete;
  ObservedMessage &operator=(const ObservedMessage &) = delete;

 private:
  void begin(bool sent, Rank peer, const MsgHeader &header, Payload payload);
  void end();
  const Observers *on_;
  TraceEvent event_;
};

// A one-sided read of `count` pages from `first` at `home` (no message: the
// trace shows it as a span on the reading thread; the profile counts the
// pages in).
class ObservedRemoteRead : public ObservedSpan {
 public:
  ObservedRemoteRead(Rank home, uint64_t first, uint32_t count, uint64_t bytes);
};

// Service thread: a nap ended (rung or not); returns rung, so that it wraps
// the doorbell wait. A later poll that serves messages is then traced as a
// wake-up with the nap before it.
void observe_service_nap_slow(uint32_t nap_us, bool rung);
void observe_service_served_slow(int messages);
void observe_allocation_slow(AllocKind kind, void *ptr, uint64_t bytes, int placement, int on_rank);
void observe_name_thread_slow(const char *name, int64_t number);
inline void observe_name_thread(const char *name, int64_t number) {
  if (observers()) observe_name_thread_slow(name, number);
}
inline bool observe_service_nap(uint32_t nap_us, bool rung) {
  if (observers()) observe_service_nap_slow(nap_us, rung);
  return rung;
}
inline void observe_service_served(int messages) {
  if (observers()) observe_service_served_slow(messages);
}

// The protocol changed this rank's access to a page (EngineHost::set_access).
void observe_access_slow(uint64_t page, Access access);
inline void observe_access(uint64_t page, Access access) {
  if (observers()) observe_access_slow(page, access);
}

// Returns ptr: wraps an allocation's return value (null: nothing recorded).
inline void *observe_allocation(AllocKind kind, void *ptr, uint64_t bytes, Placement placement = Placement::Block,
                                Rank on_rank = 0) {
  if (ptr && observers()) observe_allocation_slow(kind, ptr, bytes, (int)placement, on_rank);
  return ptr;
}

}  // namespace agora
