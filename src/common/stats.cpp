#include "common/stats.h"

#include <cstdio>

namespace agora {

// One list of fields keeps JSON, table and (de)serialisation in step.
#define AGORA_STATS_COUNTERS(X)                                                     \
  X(read_faults) X(write_faults) X(pages_fetched) X(invalidations_sent)             \
  X(invalidations_received) X(messages_sent) X(bytes_sent) X(lock_acquires) X(barriers)  \
  X(twins) X(diffs_sent) X(diff_bytes) X(intervals) X(notices_applied) X(stale_replies)       \
  X(notices_kept_peak) X(updates_applied)
#define AGORA_STATS_TIMES(X) X(fault_time_s) X(sync_time_s)

void Stats::add(const Stats &o) {
#define ADD(f) f += o.f;
  AGORA_STATS_COUNTERS(ADD) AGORA_STATS_TIMES(ADD)
#undef ADD
}

std::string Stats::to_json() const {
  std::string s = "{";
  char buf[96];
#define C(f) std::snprintf(buf, sizeof buf, "\"%s\": %llu, ", #f, (unsigned long long)f); s += buf;
#define T(f) std::snprintf(buf, sizeof buf, "\"%s\": %.6f, ", #f, f); s += buf;
  AGORA_STATS_COUNTERS(C) AGORA_STATS_TIMES(T)
#undef C
#undef T
  s.resize(s.size() - 2);
  return s + "}";
}

std::vector<double> Stats::to_vector() const {
  std::vector<double> v;
#define P(f) v.push_back((double)f);
  AGORA_STATS_COUNTERS(P) AGORA_STATS_TIMES(P)
#undef P
  return v;
}

Stats Stats::from_vector(const double *v) {
  Stats s;
  int i = 0;
#define G(f) s.f = (decltype(s.f))v[i++];
  AGORA_STATS_COUNTERS(G) AGORA_STATS_TIMES(G)
#undef G
  return s;
}

std::string stats_report_json(const std::vector<Stats> &per_rank, const std::string &protocol) {
  Stats total;
  std::string s = "{\"protocol\": \"" + protocol + "\", \"ranks\": [";
  for (size_t r = 0; r < per_rank.size(); ++r) {
    total.add(per_rank[r]);
    std::string obj = per_rank[r].to_json();
    s += (r ? ", " : "") + ("{\"rank\": " + std::to_string(r) + ", " + obj.substr(1));
  }
  return s + "], \"totals\": " + total.to_json() + "}\n";
}

std::string stats_report_table(const std::vector<Stats> &per_rank, const std::string &protocol) {
  std::string s = "agora statistics (protocol " + protocol + ")\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%6s %9s %9s %9s %9s %9s %10s %12s %8s %8s %9s %9s\n", "rank",
                "rd_fault", "wr_fault", "fetched", "inv_sent", "inv_recv", "msgs", "bytes",
                "locks", "barriers", "fault_s", "sync_s");
  s += buf;
  Stats total;
  auto row = [&](const char *name, const Stats &st) {
    std::snprintf(buf, sizeof buf,
                  "%6s %9llu %9llu %9llu %9llu %9llu %10llu %12llu %8llu %8llu %9.4f %9.4f\n", name,
                  (unsigned long long)st.read_faults, (unsigned long long)st.write_faults,
                  (unsigned long long)st.pages_fetched, (unsigned long long)st.invalidations_sent,
                  (unsigned long long)st.invalidations_received,
                  (unsigned long long)st.messages_sent, (unsigned long long)st.bytes_sent,
                  (unsigned long long)st.lock_acquires, (unsigned long long)st.barriers,
                  st.fault_time_s, st.sync_time_s);
    s += buf;
  };
  for (size_t r = 0; r < per_rank.size(); ++r) {
    total.add(per_rank[r]);
    row(std::to_string(r).c_str(), per_rank[r]);
  }
  row("total", total);
  if (total.intervals || total.twins) {  // lazy release consistency at work
    std::snprintf(buf, sizeof buf, "%6s %9s %9s %12s %9s %9s %9s %9s\n", "rank", "intervals", "twins",
                  "diffs", "diff_bytes", "notices", "stale", "kept_max");
    s += buf;
    for (size_t r = 0; r < per_rank.size(); ++r) {
      const Stats &st = per_rank[r];
      std::snprintf(buf, sizeof buf, "%6zu %9llu %9llu %12llu %9llu %9llu %9llu %9llu\n", r,
                    (unsigned long long)st.intervals, (unsigned long long)st.twins,
                    (unsigned long long)st.diffs_sent, (unsigned long long)st.diff_bytes,
                    (unsigned long long)st.notices_applied, (unsigned long long)st.stale_replies,
                    (unsigned long long)st.notices_kept_peak);
      s += buf;
    }
  }
  return s;
}

}  // namespace agora
