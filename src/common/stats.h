// Per-rank counters. Updated only on slow paths (faults, messages, sync),
// under the runtime lock, so plain integers suffice.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace agora {

struct Stats {
  uint64_t read_faults = 0;
  uint64_t write_faults = 0;
  uint64_t pages_fetched = 0;
  uint64_t invalidations_sent = 0;
  uint64_t invalidations_received = 0;
  uint64_t messages_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t lock_acquires = 0;
  uint64_t barriers = 0;
  // Lazy release consistency (hlrc); zero under sc.
  uint64_t twins = 0;               // pages copied at a first write in an interval
  uint64_t diffs_sent = 0;          // page diffs sent to homes
  uint64_t diff_bytes = 0;          // bytes of those diffs (runs and their headers)
  uint64_t intervals = 0;           // intervals closed with writes
  uint64_t notices_applied = 0;     // write notices that invalidated a page here
  uint64_t stale_replies = 0;       // page replies dropped: older than required, or duplicates
  uint64_t notices_kept_peak = 0;   // most intervals stored at once (bounded by GC)
  // Regional consistency (regc): fine-grain updates applied to a cached copy
  // in place of an invalidation (lock-carried, broadcast or at barriers).
  uint64_t updates_applied = 0;
  double fault_time_s = 0;
  double sync_time_s = 0;

  void add(const Stats &o);
  // {"read_faults": ..., ...}
  std::string to_json() const;
  // Flat vector for collective reduction and its inverse.
  std::vector<double> to_vector() const;
  static Stats from_vector(const double *v);
  static constexpr int kFields = 19;
};

// {"ranks": [...], "totals": {...}}
std::string stats_report_json(const std::vector<Stats> &per_rank, const std::string &protocol);
// Human-readable table, one row per rank plus totals.
std::string stats_report_table(const std::vector<Stats> &per_rank, const std::string &protocol);

}  // namespace agora
