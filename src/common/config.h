// Run-time configuration from AGORA_* environment variables. The variables,
// their flags, defaults, allowed values and docs are one table:
// src/common/options.def (a row per variable, naming its Config member).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/options.h"

namespace agora {

// The enums of Choice options list their values in the order of the row's
// choices (options.def): a word's index is the value.
enum class ServiceMode { Adaptive, Poll };
// How a thread waiting inside the library waits (docs/service.md): Spin polls
// and yields its core when idle; Block sleeps until the service thread,
// woken by a doorbell on every message, completes the wait. Auto: spin (it
// measured faster on oversubscribed nodes too); the detection is logged.
enum class WaitMode { Auto, Spin, Block };
// Whether a rank rings ranks its doorbell signal cannot reach with a UDP
// datagram (docs/service.md, "Doorbell").
enum class RemoteDoorbellMode { Auto, Off };
enum class RefreshMode { On, Off };
// agora_flush (docs/flush.md): the observer model of Wong & Rendell §III, or the
// basic region flush (diff and refresh on every flush), for comparison.
enum class FlushMode { Observer, Basic };
// AGORA_GPTR, in options.def's order (gptr::Scheme is the engine's).
enum class GptrScheme : uint8_t { OrderCache, OrderNoCache, Sequencer, Swcc, Direct };
// hlrc: when an interval ends (see src/protocol/hlrc/hlrc_engine.h).
enum class IntervalPolicy { Lazy, Aggressive };
// How pages homed elsewhere are read when the engine allows either path:
// one-sided MPI RMA where the host can (Auto), or always by message.
enum class FetchMode { Auto, Messages, OneSided };
// AGORA_CACHE_POLICY: which copy of a remote page the bounded cache gives up
// first (src/memory/page_cache.h).
enum class CachePolicy : uint8_t { Clock, Fifo };
// AGORA_CACHE_FRAMES: where copies of remote pages live (runtime/cache/copy_cache_frames.cpp).
enum class CacheFrames : uint8_t { Pool, Discard };
// How a home learns which of its pages it wrote: the kernel's write
// tracking where available (Auto), or write-protect traps.
enum class HomeWritesMode { Auto, Sync, Trap };

// The largest AGORA_MEMORY accepted (options.def says why).
constexpr uint64_t kMaxMemoryBytes = 40ull << 40;

enum class HeapPlacement : uint8_t { Local, Block, Cyclic };
// The smallest malloc that AGORA_HEAP=block|cyclic spreads over the ranks:
// smaller blocks stay on the calling rank (a placed allocation costs a round
// of messages to every rank).
constexpr uint64_t kHeapPlacedMin = 1ull << 20;

// Each member is set by its row in options.def; its initializer is the
// row's default.
struct Config {
  std::string protocol = "hlrc";                // AGORA_PROTOCOL (docs/running.md#the-default-protocol)
  uint64_t memory_bytes = 0;                    // AGORA_MEMORY (global range, all ranks together); 0: chosen at start
  bool print_stats = false;                     // AGORA_STATS
  std::string stats_json_path;                  // AGORA_STATS_JSON
  ServiceMode service = ServiceMode::Adaptive;  // AGORA_SERVICE
  uint32_t service_sleep_us = 1000;             // AGORA_SERVICE_SLEEP_US: longest idle nap of the service thread
  WaitMode wait = WaitMode::Auto;               // AGORA_WAIT: auto, spin or block
  FetchMode fetch = FetchMode::Auto;            // AGORA_FETCH: auto (one-sided where possible) or messages
  HomeWritesMode home_writes = HomeWritesMode::Auto;  // AGORA_HOME_WRITES: auto, sync or trap
  bool debug = false;                                 // AGORA_DEBUG
  uint32_t threads_per_rank = 1;                      // AGORA_THREADS_PER_RANK: agora_thread_create placement
  IntervalPolicy intervals = IntervalPolicy::Lazy;    // AGORA_INTERVALS (hlrc): lazy or aggressive
  uint32_t prefetch = 63;                 // AGORA_PREFETCH: most pages fetched ahead of a sequential miss (0: off)
  RefreshMode refresh = RefreshMode::On;  // AGORA_REFRESH (hlrc): refetch hot pages at barrier end
  FlushMode flush = FlushMode::Observer;  // AGORA_FLUSH: observer or basic region flush
  // AGORA_CACHE: most bytes of remote pages a rank keeps copies of (0, unset:
  // as many as the kernel's mapping limit allows); AGORA_CACHE_POLICY.
  uint64_t cache_bytes = 0;
  CachePolicy cache_policy = CachePolicy::Clock;
  CacheFrames cache_frames = CacheFrames::Pool;
  // Global pointers (docs/gptr.md).
  GptrScheme gptr_scheme = GptrScheme::OrderCache;  // AGORA_GPTR
  uint64_t gptr_segment_bytes = 256ull << 20;       // AGORA_GPTR_SEGMENT
  uint32_t gptr_line_bytes = 64;                    // AGORA_GPTR_LINE
  uint32_t gptr_rank_bits = 2;                      // AGORA_GPTR_RANK_BITS
  uint32_t gptr_index_bits = 10;                    // AGORA_GPTR_INDEX_BITS
  uint32_t gptr_block_bytes = 64;                   // AGORA_GPTR_BLOCK
  uint32_t gptr_dir_bits = 12;                      // AGORA_GPTR_DIR_BITS
  uint64_t gptr_chunk_bytes = 32ull << 10;          // AGORA_GPTR_CHUNK
  uint32_t hang_warn_s = 60;                        // AGORA_HANG_WARN: warn about ranks others wait for this long
  uint32_t hang_timeout_s = 0;                      // AGORA_HANG_TIMEOUT: end such a job after this long (0: never)
  // AGORA_DOORBELL_SIGNAL: the real-time signal that wakes a napping service
  // thread; 0 = the first of SIGRTMIN+5.. with the default action (the
  // runtime checks the real-time range, which only libc knows).
  uint32_t doorbell_signal = 0;
  RemoteDoorbellMode remote_doorbell = RemoteDoorbellMode::Auto;  // AGORA_REMOTE_DOORBELL
  // Memory servers (docs/memory-servers.md): the last memory_servers ranks
  // home all global memory in stripe_bytes chunks (0: off, every rank homes).
  uint32_t memory_servers = 0;        // AGORA_MEMORY_SERVERS
  uint64_t stripe_bytes = 4096;       // AGORA_STRIPE
  uint64_t stack_bytes = 8ull << 20;  // AGORA_STACK: program mode's stacks in global memory
  // AGORA_HEAP: where program mode puts the program's large malloc'd blocks
  // (kHeapPlacedMin and up): on the calling rank (local), or spread like
  // agora_malloc_placed's block or cyclic placement.
  HeapPlacement heap = HeapPlacement::Local;
  // Observability (docs/observability.md).
  std::string trace_dir;             // AGORA_TRACE: write agora-trace.<rank>.json here
  uint64_t trace_events = 1u << 20;  // AGORA_TRACE_EVENTS: trace buffer capacity per rank
  bool profile = false;              // AGORA_PROFILE: write agora-profile.<rank>.json
};

// Fills *out from the environment (each runtime row of options.def). On a bad
// value returns false and sets *error to a message naming the variable, the
// value and what is allowed.
bool config_from_env(Config *out, std::string *error, const std::vector<std::string> &known_protocols);

// One message per AGORA_* environment variable that nothing in Agora reads
// (a typo would otherwise be silently ignored), naming the closest known
// variable when one is close: "unknown variable AGORA_PROTOCL (did you mean
// AGORA_PROTOCOL?); it is ignored". The known names are options.def's rows.
std::vector<std::string> config_unknown_variables();

// The known variable closest to `name` by edit distance; "" when even the
// closest differs in more than about half of the part after "AGORA_".
std::string config_closest_variable(const std::string &name);

}  // namespace agora
