// Run-time configuration from AGORA_* environment variables. Every option has
// a launcher flag (tools/agorarun) that sets the same variable.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace agora {

enum class ServiceMode { Adaptive, Poll };
// How a thread waiting inside the library waits (docs/service.md): Spin polls
// and yields its core when idle; Block sleeps until the service thread,
// woken by a doorbell on every message, completes the wait. Auto: spin (it
// measured faster on oversubscribed nodes too); the detection is logged.
enum class WaitMode { Auto, Spin, Block };
// hlrc: when an interval ends (see src/protocol/hlrc/hlrc_engine.h).
enum class IntervalPolicy { Lazy, Aggressive };

struct Config {
  std::string protocol = "sc";          // AGORA_PROTOCOL
  uint64_t memory_bytes = 4ull << 30;   // AGORA_MEMORY (global range, all ranks together)
  bool print_stats = false;             // AGORA_STATS
  std::string stats_json_path;          // AGORA_STATS_JSON
  ServiceMode service = ServiceMode::Adaptive;  // AGORA_SERVICE
  uint32_t service_sleep_us = 1000;     // AGORA_SERVICE_SLEEP_US: longest idle nap of the service thread
  WaitMode wait = WaitMode::Auto;       // AGORA_WAIT: auto, spin or block
  bool debug = false;                   // AGORA_DEBUG
  uint32_t threads_per_rank = 1;        // AGORA_THREADS_PER_RANK: agora_thread_create placement
  IntervalPolicy intervals = IntervalPolicy::Lazy;  // AGORA_INTERVALS (hlrc): lazy or aggressive
};

// Fills *out from the environment. On a bad value returns false and sets
// *error to a message naming the variable, the value and what is allowed.
bool config_from_env(Config *out, std::string *error,
                     const std::vector<std::string> &known_protocols);

// "4G", "512M", "65536" -> bytes. False on malformed input or overflow.
bool parse_size(const std::string &text, uint64_t *bytes);

}  // namespace agora
