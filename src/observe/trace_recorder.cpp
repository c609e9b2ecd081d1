#include "observe/trace_recorder.h"

#include "observe/page_profile.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace agora {

const char *trace_kind_name(TraceKind kind) {
  switch (kind) {
    case TraceKind::Fault:
      return "fault";
    case TraceKind::LockWait:
      return "lock wait";
    case TraceKind::Barrier:
      return "barrier";
    case TraceKind::Reduce:
      return "reduce";
    case TraceKind::Send:
      return "send";
    case TraceKind::Receive:
      return "receive";
    case TraceKind::RemoteRead:
      return "one-sided read";
    case TraceKind::ServiceWake:
      return "service wake-up";
    case TraceKind::Alloc:
      return "alloc";
  }
  return "?";
}

TraceRecorder::TraceRecorder(int rank, int nranks, std::string host, uint64_t capacity)
    : rank_(rank),
      nranks_(nranks),
      host_(std::move(host)),
      capacity_(capacity),
      // Not value-initialised: the pages are touched only as events arrive.
      events_(new TraceEvent[capacity]),
      sent_(new std::atomic<uint64_t>[nranks]()),
      received_(new std::atomic<uint64_t>[nranks]()) {}

namespace {
// Below 2^53 so that JSON readers with doubles (JavaScript) keep it exact:
// 21 bits of (source, destination) pair, 32 bits of sequence.
uint64_t flow_id(int src, int dst, int nranks, uint64_t seq) {
  uint64_t pair = (uint64_t)src * (uint64_t)nranks + (uint64_t)dst;
  return ((pair & ((1u << 21) - 1)) << 32) | (seq & 0xffffffffu);
}
}  // namespace

uint64_t TraceRecorder::next_send_flow(int dst) {
  if (dst < 0 || dst >= nranks_) return 0;
  uint64_t seq = sent_[dst].fetch_add(1, std::memory_order_relaxed) + 1;
  return flow_id(rank_, dst, nranks_, seq);
}

uint64_t TraceRecorder::next_receive_flow(int src) {
  if (src < 0 || src >= nranks_) return 0;
  uint64_t seq = received_[src].fetch_add(1, std::memory_order_relaxed) + 1;
  return flow_id(src, rank_, nranks_, seq);
}

void TraceRecorder::name_thread(int tid, const std::string &name) {
  std::lock_guard<std::mutex> g(names_mutex_);
  for (auto &entry : thread_names_)
    if (entry.first == tid) {
      entry.second = name;
      return;
    }
  thread_names_.emplace_back(tid, name);
}

uint64_t TraceRecorder::recorded() const { return std::min(next_.load(std::memory_order_relaxed), capacity_); }

namespace {
// Microseconds with nanosecond decimals, the Trace Event Format's unit.
void put_us(std::ostream &out, uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
  out << text;
}

void put_string(std::ostream &out, const std::string &s) {
  out << '"';
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out << '\\' << ch;
    else if ((unsigned char)ch < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", (unsigned)ch);
      out << esc;
    } else
      out << ch;
  }
  out << '"';
}

const char *channel_name(uint16_t channel) {
  static const char *names[] = {"?",         "protocol",      "lock",  "barrier",        "reduce",
                                "memory",    "thread",        "watch", "thread-barrier", "semaphore",
                                "condition", "thread-reduce", "gptr"};
  return channel < sizeof names / sizeof names[0] ? names[channel] : "?";
}

void put_hex(std::ostream &out, uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "\"0x%" PRIx64 "\"", v);
  out << text;
}
}  // namespace

void TraceRecorder::write_json(std::ostream &out) const {
  out << "{\"traceEvents\":[\n";
  // Metadata first: the process (rank) and its threads' names.
  out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << rank_ << ",\"tid\":0,\"args\":{\"name\":";
  put_string(out, "rank " + std::to_string(rank_) + " on " + host_);
  out << "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << rank_
      << ",\"tid\":0,\"args\":{\"sort_index\":" << rank_ << "}}";
  {
    std::lock_guard<std::mutex> g(names_mutex_);
    for (const auto &[tid, name] : thread_names_) {
      out << ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << rank_ << ",\"tid\":" << tid
          << ",\"args\":{\"name\":";
      put_string(out, name);
      out << "}}";
    }
  }
  uint64_t n = recorded();
  for (uint64_t i = 0; i < n; ++i) {
    const TraceEvent &e = events_[i];
    const char *name = trace_kind_name(e.kind);
    std::string label = name;
    if (e.kind == TraceKind::Fault)
      label = e.flag ? "write fault" : "read fault";
    else if (e.kind == TraceKind::Send || e.kind == TraceKind::Receive)
      label = std::string(name) + " " + channel_name(e.channel);
    out << ",\n{\"ph\":\"X\",\"cat\":\"agora\",\"name\":";
    put_string(out, label);
    out << ",\"pid\":" << rank_ << ",\"tid\":" << e.tid << ",\"ts\":";
    put_us(out, e.start_ns);
    out << ",\"dur\":";
    put_us(out, e.dur_ns);
    out << ",\"args\":{";
    switch (e.kind) {
      case TraceKind::Fault:
        out << "\"page\":" << e.a << ",\"home\":" << e.b << ",\"addr\":";
        put_hex(out, e.c);
        out << ",\"access\":\"" << (e.flag ? "write" : "read") << "\"";
        break;
      case TraceKind::LockWait:
        out << "\"lock\":" << e.a;
        break;
      case TraceKind::Barrier:
      case TraceKind::Reduce:  // c: the call's name, a static string
        out << "\"call\":\"" << (e.c ? (const char *)(uintptr_t)e.c : "?") << "\"";
        break;
      case TraceKind::Send:
      case TraceKind::Receive:
        out << "\"peer\":" << e.peer << ",\"bytes\":" << e.bytes << ",\"channel\":\"" << channel_name(e.channel)
            << "\",\"op\":" << e.a;
        break;
      case TraceKind::ServiceWake:
        out << "\"messages\":" << e.a << ",\"nap_us\":" << e.b << ",\"rung\":" << (int)e.flag;
        break;
      case TraceKind::RemoteRead:
        out << "\"home\":" << e.peer << ",\"page\":" << e.a << ",\"pages\":" << e.b << ",\"bytes\":" << e.bytes;
        break;
      case TraceKind::Alloc:
        out << "\"addr\":";
        put_hex(out, e.a);
        out << ",\"bytes\":" << e.b << ",\"call\":\"" << alloc_kind_name((AllocKind)e.c) << "\"";
        break;
    }
    out << "}}";
    // A message's send and receive are joined by a flow arrow: each flow
    // event binds to the slice that encloses its timestamp on its thread.
    if (e.flow && (e.kind == TraceKind::Send || e.kind == TraceKind::Receive)) {
      bool start = e.kind == TraceKind::Send;
      out << ",\n{\"ph\":\"" << (start ? "s" : "f") << "\"," << (start ? "" : "\"bp\":\"e\",")
          << "\"cat\":\"agora\",\"name\":\"message\",\"id\":" << e.flow << ",\"pid\":" << rank_ << ",\"tid\":" << e.tid
          << ",\"ts\":";
      put_us(out, e.start_ns);
      out << "}";
    }
  }
  out << "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"agora_trace_version\":1,\"rank\":" << rank_
      << ",\"nranks\":" << nranks_ << ",\"host\":";
  put_string(out, host_);
  out << ",\"clock\":\"CLOCK_MONOTONIC\",\"clock_reference\":{\"monotonic_ns\":" << clock_monotonic_ns_
      << ",\"wall_ns\":" << clock_wall_ns_ << "},\"capacity\":" << capacity_ << ",\"recorded\":" << n
      << ",\"dropped\":" << dropped() << "}}\n";
}

}  // namespace agora
