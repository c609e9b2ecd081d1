// Per-rank statistics. The fields are agora_stats_t's, made from
// AGORA_STATS_FIELDS in include/agora/agora.h: that list is the one place a
// statistic is declared, and the JSON, the table and the API follow it.
// Updated only on slow paths (faults, messages, sync), under the runtime
// lock, so plain integers suffice; readers take the same lock.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "agora/agora.h"

namespace agora {

// How a statistic combines over ranks: counters and seconds add up, a peak
// is the highest any rank reached.
enum class StatKind : uint8_t { Counter, Peak, Seconds };

struct StatField {
  const char *name;
  StatKind kind;
  const char *doc;
};

struct Stats : agora_stats_t {
  Stats() : agora_stats_t{} {}
  explicit Stats(const agora_stats_t &s) : agora_stats_t(s) {}

#define AGORA_STATS_ONE_(kind, name, doc) +1  // NOLINT(bugprone-macro-parentheses): a term of a sum
  static constexpr int kFields = 0 AGORA_STATS_FIELDS(AGORA_STATS_ONE_);
#undef AGORA_STATS_ONE_
  static const StatField kField[kFields];  // in list order

  // Folds another rank's statistics into this job view (sums; peaks max).
  void combine(const Stats &o);
  // Field i as a number (counters and peaks exactly up to 2^53).
  double value(int i) const;
  // Field i as text: an integer, or seconds with 6 decimals.
  std::string text(int i) const;
  // {"read_faults": ..., ...}: every field, in list order.
  std::string to_json() const;
};
static_assert(sizeof(Stats) == sizeof(agora_stats_t), "Stats adds no data to agora_stats_t");
static_assert(sizeof(agora_stats_t) == Stats::kFields * sizeof(uint64_t), "every statistic is 8 bytes, no padding");

// What a report says besides the numbers.
struct StatsRun {
  std::string protocol;
  std::vector<std::string> hosts;  // per rank; may be empty (unknown)
  int memory_servers = 0;          // the last ranks are memory servers (the table says so)
};

// The AGORA_STATS_JSON document (schema in docs/stats.md):
// {"schema", "agora_version", "protocol", "nranks", "hosts", "fields",
//  "ranks": [{"rank": r, ...}], "totals": {...}}
std::string stats_report_json(const std::vector<Stats> &per_rank, const StatsRun &run);
// The AGORA_STATS=1 table: a row per statistic that is not zero everywhere,
// a column per rank (per-rank min and max beyond kTableRankColumns ranks)
// and the job's value.
std::string stats_report_table(const std::vector<Stats> &per_rank, const StatsRun &run);
inline constexpr size_t kTableRankColumns = 8;

}  // namespace agora
