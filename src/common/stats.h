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
  double fault_time_s = 0;
  double sync_time_s = 0;

  void add(const Stats &o);
  // {"read_faults": ..., ...}
  std::string to_json() const;
  // Flat vector for collective reduction and its inverse.
  std::vector<double> to_vector() const;
  static Stats from_vector(const double *v);
  static constexpr int kFields = 11;
};

// {"ranks": [...], "totals": {...}}
std::string stats_report_json(const std::vector<Stats> &per_rank, const std::string &protocol);
// Human-readable table, one row per rank plus totals.
std::string stats_report_table(const std::vector<Stats> &per_rank, const std::string &protocol);

}  // namespace agora
