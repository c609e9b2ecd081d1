// Statistics: reading and resetting this rank's counters under the lock they
// are updated under, the job's view (a collective), and the report rank 0
// writes at finalize (AGORA_STATS table, AGORA_STATS_JSON), whose path is
// checked at start-up.
#include <cstdio>
#include <cstring>
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
  *error =
      "AGORA_STATS_JSON=" + path + " cannot be written" + (rank == 0 ? ": " + reason : std::string(" (see rank 0)"));
  return false;
}

}  // namespace runtime_internal

Stats Runtime::stats_snapshot() {
  std::lock_guard<std::mutex> g(lock_);
  return stats_;
}

void Runtime::stats_reset() {
  std::lock_guard<std::mutex> g(lock_);
  stats_ = Stats();
}

std::string Runtime::stats_json() { return stats_snapshot().to_json(); }

int Runtime::stats_job(Stats *out) {
  // The snapshot comes first: the reductions' own messages are not in it.
  Stats mine = stats_snapshot();
  // One reduction per way of combining, each over the fields of its kinds.
  std::vector<int64_t> sums, peaks;
  std::vector<double> seconds;
#define AGORA_STATS_PACK_COUNTER(name) sums.push_back((int64_t)mine.name);
#define AGORA_STATS_PACK_PEAK(name) peaks.push_back((int64_t)mine.name);
#define AGORA_STATS_PACK_SECONDS(name) seconds.push_back(mine.name);
#define AGORA_STATS_PACK_(kind, name, doc) AGORA_STATS_PACK_##kind(name)
  AGORA_STATS_FIELDS(AGORA_STATS_PACK_)
  if (int status = reduce(sums.data(), sums.size(), ReduceType::Int64, ReduceOp::Sum)) return status;
  if (int status = reduce(peaks.data(), peaks.size(), ReduceType::Int64, ReduceOp::Max)) return status;
  if (int status = reduce(seconds.data(), seconds.size(), ReduceType::Double, ReduceOp::Sum)) return status;
  size_t next_sum = 0, next_peak = 0, next_seconds = 0;
#define AGORA_STATS_UNPACK_COUNTER(name) out->name = (uint64_t)sums[next_sum++];
#define AGORA_STATS_UNPACK_PEAK(name) out->name = (uint64_t)peaks[next_peak++];
#define AGORA_STATS_UNPACK_SECONDS(name) out->name = seconds[next_seconds++];
#define AGORA_STATS_UNPACK_(kind, name, doc) AGORA_STATS_UNPACK_##kind(name)
  AGORA_STATS_FIELDS(AGORA_STATS_UNPACK_)
  return AGORA_OK;
}

// Collective, at finalize (the service thread has stopped).
void Runtime::report_stats() {
  Stats mine = stats_snapshot();
  std::vector<std::byte> all = transport_.gather(&mine, sizeof mine, 0);
  std::vector<std::string> hosts = transport_.gather_host_names(0);
  if (rank() != 0) return;
  std::vector<Stats> per_rank(nranks());
  std::memcpy(per_rank.data(), all.data(), all.size());
  StatsRun run{config_.protocol, hosts, (int)config_.memory_servers};
  if (config_.print_stats) {
    std::string table = stats_report_table(per_rank, run);
    std::fputs(table.c_str(), stderr);
  }
  if (!config_.stats_json_path.empty()) {
    std::ofstream out(config_.stats_json_path);
    out << stats_report_json(per_rank, run);
    if (!out) log_error("cannot write AGORA_STATS_JSON=%s", config_.stats_json_path.c_str());
  }
}

}  // namespace agora
