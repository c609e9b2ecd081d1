// Statistics at finalize: rank 0 gathers every rank's counters and prints
// the table (AGORA_STATS) and writes the JSON (AGORA_STATS_JSON), whose path
// is checked at start-up.
#include <cstdio>
#include <fstream>

#include "common/log.h"
#include "runtime/runtime.h"
#include "runtime/runtime_internal.h"

namespace agora {

namespace runtime_internal {

// AGORA_STATS_JSON is written by rank 0 at finalize: check at start, on rank
// 0's file system, that it can be, and fail on every rank if not rather than
// lose the statistics after the whole run.
bool stats_json_path_usable(const std::string &path, Rank rank, MpiTransport &transport, std::string *error) {
  if (path.empty()) return true;
  std::string reason;
  bool usable = transport.broadcast_from_root(rank != 0 || platform::file_writable(path, &reason));
  if (usable) return true;
  *error = "AGORA_STATS_JSON=" + path + " cannot be written" +
           (rank == 0 ? ": " + reason : std::string(" (see rank 0)"));
  return false;
}

}  // namespace runtime_internal

void Runtime::report_stats() {
  std::vector<double> mine = stats_.to_vector();
  std::vector<double> all = transport_.gather_to_root(mine);
  if (rank() != 0) return;
  std::vector<Stats> per_rank;
  for (Rank r = 0; r < nranks(); ++r) per_rank.push_back(Stats::from_vector(&all[r * Stats::kFields]));
  if (config_.print_stats) {
    std::string table = stats_report_table(per_rank, config_.protocol);
    std::fputs(table.c_str(), stderr);
  }
  if (!config_.stats_json_path.empty()) {
    std::ofstream out(config_.stats_json_path);
    out << stats_report_json(per_rank, config_.protocol);
    if (!out) log_error("cannot write AGORA_STATS_JSON=%s", config_.stats_json_path.c_str());
  }
}

}  // namespace agora
