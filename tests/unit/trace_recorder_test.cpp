// The trace recorder's bound (drops counted, never more than the capacity
// kept), its JSON (parsed back: every event where it belongs), and flow ids
// (the k-th message of a pair has the same id on both sides).
#include "observe/trace_recorder.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>
#include <vector>

namespace agora {
namespace {

TraceEvent fault_event(uint64_t page, uint64_t start_ns) {
  TraceEvent e{};
  e.kind = TraceKind::Fault;
  e.a = page;
  e.b = 1;
  e.c = 0x200000001008;
  e.flag = 1;
  e.tid = 42;
  e.start_ns = start_ns;
  e.dur_ns = 1500;
  return e;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TraceRecorder, KeepsAtMostItsCapacityAndCountsTheRest) {
  TraceRecorder trace(0, 2, "host", 10);
  for (int i = 0; i < 25; ++i) trace.record(fault_event(i, 1000 + i));
  EXPECT_EQ(trace.recorded(), 10u);
  EXPECT_EQ(trace.dropped(), 15u);
  std::ostringstream out;
  trace.write_json(out);
  EXPECT_EQ(count(out.str(), "\"write fault\""), 10u);
  EXPECT_NE(out.str().find("\"dropped\":15"), std::string::npos);
  EXPECT_NE(out.str().find("\"capacity\":10"), std::string::npos);
}

TEST(TraceRecorder, ConcurrentRecordersNeverExceedTheBound) {
  TraceRecorder trace(1, 2, "host", 1000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&trace] {
      for (int i = 0; i < 5000; ++i) trace.record(fault_event(i, i));
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(trace.recorded(), 1000u);
  EXPECT_EQ(trace.dropped(), 19000u);
}

TEST(TraceRecorder, WritesTraceEventFormat) {
  TraceRecorder trace(3, 4, "node\"7", 100);
  trace.name_thread(42, "agora service");
  trace.record(fault_event(5, 1234567));
  TraceEvent send{};
  send.kind = TraceKind::Send;
  send.peer = 2;
  send.bytes = 4128;
  send.channel = 1;
  send.tid = 42;
  send.start_ns = 2000;
  send.flow = trace.next_send_flow(2);
  trace.record(send);
  std::ostringstream out;
  trace.write_json(out);
  const std::string json = out.str();
  // The process is the rank, named with its host (quotes escaped).
  EXPECT_NE(json.find("\"name\":\"process_name\",\"pid\":3"), std::string::npos);
  EXPECT_NE(json.find("rank 3 on node\\\"7"), std::string::npos);
  EXPECT_NE(json.find("\"thread_name\",\"pid\":3,\"tid\":42,\"args\":{\"name\":\"agora service\"}"), std::string::npos);
  // Microseconds with nanosecond decimals.
  EXPECT_NE(json.find("\"ts\":1234.567,\"dur\":1.500"), std::string::npos);
  EXPECT_NE(json.find("\"page\":5,\"home\":1,\"addr\":\"0x200000001008\",\"access\":\"write\""), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"send protocol\""), std::string::npos);
  EXPECT_NE(json.find("\"peer\":2,\"bytes\":4128,\"channel\":\"protocol\""), std::string::npos);
  EXPECT_NE(json.find("{\"ph\":\"s\",\"cat\":\"agora\",\"name\":\"message\",\"id\":"), std::string::npos);
  EXPECT_EQ(json.rfind("}\n"), json.size() - 2);
}

TEST(TraceRecorder, FlowIdsMatchAcrossThePair) {
  TraceRecorder sender(0, 3, "h", 10), receiver(2, 3, "h", 10);
  for (int k = 0; k < 5; ++k) {
    uint64_t sent = sender.next_send_flow(2);
    EXPECT_EQ(sent, receiver.next_receive_flow(0));
    EXPECT_NE(sent, 0u);
    EXPECT_LT(sent, 1ull << 53);  // exact in JSON readers with doubles
  }
  // Another pair's ids differ.
  EXPECT_NE(sender.next_send_flow(1), receiver.next_receive_flow(1));
  EXPECT_EQ(sender.next_send_flow(7), 0u);  // no such rank: no flow
}

}  // namespace
}  // namespace agora
