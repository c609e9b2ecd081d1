// What an observation hook costs (docs/observability.md): a fault-style span
// and a message hook, off (no AGORA_TRACE / AGORA_PROFILE: a load and a
// branch) and on (trace; trace and profile). Single process, no MPI: the
// hooks' own cost, as a fault or message would pay it. Prints ns per hook,
// the best of 5 runs of 1 M hooks each.
#include <algorithm>
#include <cstdio>

#include "observe/observe.h"
#include "platform/platform.h"

namespace {
volatile uint64_t sink;

double ns_per_hook(int kind) {
  constexpr int kHooks = 1 << 20;
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    double t0 = agora::platform::now_seconds();
    for (int i = 0; i < kHooks; ++i) {
      if (kind == 0) {
        agora::ObservedFault observed(i & 255, 1, (const void *)(uintptr_t)(0x200000000000 + i * 8), true);
        sink = sink + 1;
      } else {
        agora::MsgHeader h{agora::Channel::Protocol, 1, 0, (uint64_t)(i & 255), 0, 0};
        agora::ObservedMessage observed(true, 1, h, {nullptr, 64});
        sink = sink + 1;
      }
    }
    best = std::min(best, (agora::platform::now_seconds() - t0) * 1e9 / kHooks);
  }
  return best;
}
}  // namespace

int main() {
  const char *names[] = {"off", "trace", "trace+profile"};
  for (int mode = 0; mode < 3; ++mode) {
    agora::Config config;
    std::string error;
    if (mode >= 1) config.trace_dir = "/tmp";
    config.trace_events = 16u << 20;  // room for every event: the cost of keeping them
    config.profile = mode == 2;
    if (mode && !agora::observe_start(config, 0, 2, 0x200000000000, 4096, 1 << 20, &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    double fault = ns_per_hook(0), message = ns_per_hook(1);
    std::printf("%-14s fault span %7.1f ns   message %7.1f ns\n", names[mode], fault, message);
    // Not written: agora::observe_stop() would write /tmp/agora-trace.0.json.
    agora::g_observers.store(nullptr);
  }
  return 0;
}
