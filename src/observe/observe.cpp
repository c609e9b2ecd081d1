#include "observe/observe.h"

#include <chrono>
#include <fstream>

#include "common/log.h"
#include "platform/platform.h"

namespace agora {

namespace {
struct Outputs {
  Observers observers;
  std::string trace_path, profile_path;
};
Outputs *g_outputs = nullptr;  // owned; g_observers points into it

// The service thread's last nap, reported with the poll that follows it.
thread_local uint32_t tl_nap_us = 0;
thread_local bool tl_napped = false, tl_rung = false;
thread_local uint64_t tl_nap_start_ns = 0;

std::string output_dir(const Config &config) { return config.trace_dir.empty() ? std::string(".") : config.trace_dir; }

bool writable(const char *variable, const std::string &path, std::string *error) {
  std::string reason;
  if (platform::file_writable(path, &reason)) return true;
  *error = std::string(variable) + ": " + path + " cannot be written: " + reason;
  return false;
}
}  // namespace

uint64_t observe_now_ns() { return (uint64_t)(platform::now_seconds() * 1e9); }

int observe_thread_id() {
  thread_local int tid = platform::thread_id();
  return tid;
}

bool observe_start(const Config &config, int rank, int nranks, uintptr_t base, uint64_t page_size, uint64_t pages,
                   std::string *error) {
  if (config.trace_dir.empty() && !config.profile) return true;
  auto outputs = std::make_unique<Outputs>();
  std::string dir = output_dir(config);
  // Appended in steps: gcc 12 warns falsely (-Wrestrict) on "." + to_string().
  std::string suffix = ".";
  suffix += std::to_string(rank);
  suffix += ".json";
  if (!config.trace_dir.empty()) {
    outputs->trace_path = dir + "/agora-trace" + suffix;
    if (!writable("AGORA_TRACE", outputs->trace_path, error)) return false;
    auto *trace = new TraceRecorder(rank, nranks, platform::host_name(), config.trace_events);
    // Read together: the wall clock lets traces of different hosts be aligned.
    uint64_t wall = (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    trace->set_clock_reference(observe_now_ns(), wall);
    outputs->observers.trace = trace;
  }
  if (config.profile) {
    outputs->profile_path = dir + "/agora-profile" + suffix;
    if (!writable("AGORA_PROFILE", outputs->profile_path, error)) return false;
    outputs->observers.profile = new PageProfile(rank, nranks, base, page_size);
  }
  outputs->observers.page_size = page_size;
  outputs->observers.pages = pages;
  g_outputs = outputs.release();
  g_observers.store(&g_outputs->observers, std::memory_order_release);
  observe_name_thread("main");
  return true;
}

void observe_stop() {
  if (!g_outputs) return;
  g_observers.store(nullptr, std::memory_order_release);
  Outputs *o = g_outputs;
  g_outputs = nullptr;
  if (TraceRecorder *trace = o->observers.trace) {
    std::ofstream out(o->trace_path);
    trace->write_json(out);
    out.close();
    if (!out) log_error("AGORA_TRACE: cannot write %s", o->trace_path.c_str());
    if (trace->dropped())
      log_error(
          "AGORA_TRACE: the trace buffer was full: %llu of %llu events dropped (the file says so); "
          "raise AGORA_TRACE_EVENTS (now %llu)",
          (unsigned long long)trace->dropped(), (unsigned long long)trace->dropped() + trace->recorded(),
          (unsigned long long)trace->capacity());
    delete trace;
  }
  if (PageProfile *profile = o->observers.profile) {
    std::ofstream out(o->profile_path);
    profile->write_json(out);
    out.close();
    if (!out) log_error("AGORA_PROFILE: cannot write %s", o->profile_path.c_str());
    delete profile;
  }
  delete o;
}

void observe_name_thread_slow(const char *name, int64_t number) {
  const Observers *on = observers();
  if (!on || !on->trace) return;
  on->trace->name_thread(observe_thread_id(),
                         number < 0 ? std::string(name) : std::string(name) + " " + std::to_string(number));
}

void ObservedSpan::begin(TraceKind kind, uint64_t a, uint64_t b, uint64_t c, bool flag) {
  event_.kind = kind;  // end() needs it with the trace off too
  if (kind == TraceKind::Fault && on_->profile) on_->profile->fault(a, (int)(int64_t)b, flag, c % on_->page_size);
  if (!on_->trace) return;
  event_ = TraceEvent{};
  event_.kind = kind;
  event_.a = a;
  event_.b = b;
  event_.c = c;
  event_.flag = flag;
  event_.tid = observe_thread_id();
  event_.start_ns = observe_now_ns();
}

void ObservedSpan::end() {
  if (event_.kind == TraceKind::Barrier && on_->profile) on_->profile->next_epoch();
  if (!on_->trace) return;
  event_.dur_ns = observe_now_ns() - event_.start_ns;
  on_->trace->record(event_);
}

ObservedRemoteRead::ObservedRemoteRead(Rank home, uint64_t first, uint32_t count, uint64_t bytes)
    : ObservedSpan(TraceKind::RemoteRead, first, count) {
  if (!on_) return;
  if (on_->profile)
    for (uint64_t p = first; p < first + count && p < on_->pages; ++p) on_->profile->page_received(p, bytes / count);
  event_.peer = home;
  event_.bytes = (uint32_t)std::min<uint64_t>(bytes, UINT32_MAX);
}

void ObservedMessage::begin(bool sent, Rank peer, const MsgHeader &header, Payload payload) {
  // Whole pages (a protocol message whose payload is a page or more; its
  // first argument names the page) count as that page's traffic. Diffs and
  // write notices are counted per rank in the statistics, not here.
  if (on_->profile && header.channel == Channel::Protocol && payload.size >= on_->page_size && header.a < on_->pages) {
    if (sent)
      on_->profile->page_sent(header.a, payload.size);
    else
      on_->profile->page_received(header.a, payload.size);
  }
  if (!on_->trace) return;
  event_ = TraceEvent{};
  event_.kind = sent ? TraceKind::Send : TraceKind::Receive;
  event_.peer = peer;
  event_.bytes = (uint32_t)std::min<uint64_t>(sizeof(MsgHeader) + payload.size, UINT32_MAX);
  event_.channel = (uint16_t)header.channel;
  event_.a = header.op;
  event_.flow = sent ? on_->trace->next_send_flow(peer) : on_->trace->next_receive_flow(peer);
  event_.tid = observe_thread_id();
  event_.start_ns = observe_now_ns();
}

void ObservedMessage::end() {
  if (!on_->trace) return;
  event_.dur_ns = observe_now_ns() - event_.start_ns;
  on_->trace->record(event_);
}

void observe_service_nap_slow(uint32_t nap_us, bool rung) {
  if (!tl_napped) tl_nap_start_ns = observe_now_ns() - (uint64_t)nap_us * 1000;  // first of a run of naps
  tl_napped = true;
  tl_nap_us = nap_us;
  tl_rung = rung;
}

void observe_service_served_slow(int messages) {
  const Observers *on = observers();
  if (!on || !on->trace || !tl_napped) return;  // a busy service thread's polls are no wake-ups
  TraceEvent e{};
  e.kind = TraceKind::ServiceWake;
  e.tid = observe_thread_id();
  uint64_t now = observe_now_ns();
  // From the first nap of the idle run to the end of the poll that served.
  e.start_ns = tl_nap_start_ns;
  e.dur_ns = now - e.start_ns;
  e.a = (uint64_t)messages;
  e.b = tl_nap_us;
  e.flag = tl_rung;
  tl_napped = false;
  on->trace->record(e);
}

void observe_access_slow(uint64_t page, Access access) {
  const Observers *on = observers();
  if (on && on->profile) on->profile->access_changed(page, access == Access::Write);
}

void observe_allocation_slow(AllocKind kind, void *ptr, uint64_t bytes, int placement, int on_rank) {
  const Observers *on = observers();
  if (!on) return;
  if (on->profile) on->profile->allocation(kind, (uintptr_t)ptr, bytes, placement, on_rank);
  if (!on->trace) return;
  TraceEvent e{};
  e.kind = TraceKind::Alloc;
  e.tid = observe_thread_id();
  e.start_ns = observe_now_ns();
  e.a = (uint64_t)(uintptr_t)ptr;
  e.b = bytes;
  e.c = (uint64_t)kind;
  on->trace->record(e);
}

}  // namespace agora
