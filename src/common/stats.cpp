#include "common/stats.h"

#include <algorithm>
#include <cstdio>

namespace agora {

#define AGORA_STAT_KIND_COUNTER StatKind::Counter
#define AGORA_STAT_KIND_PEAK StatKind::Peak
#define AGORA_STAT_KIND_SECONDS StatKind::Seconds

const StatField Stats::kField[Stats::kFields] = {
#define AGORA_STATS_FIELD_(kind, name, doc) {#name, AGORA_STAT_KIND_##kind, doc},
    AGORA_STATS_FIELDS(AGORA_STATS_FIELD_)
#undef AGORA_STATS_FIELD_
};

namespace {

const char *kind_name(StatKind k) {
  return k == StatKind::Counter ? "counter" : k == StatKind::Peak ? "peak" : "seconds";
}

#define AGORA_STATS_COMBINE_COUNTER(a, b) a += b
#define AGORA_STATS_COMBINE_PEAK(a, b) a = std::max(a, b)
#define AGORA_STATS_COMBINE_SECONDS(a, b) a += b

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if ((unsigned char)c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", (unsigned)(unsigned char)c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

void Stats::combine(const Stats &o) {
#define AGORA_STATS_COMBINE_(kind, name, doc) AGORA_STATS_COMBINE_##kind(name, o.name);
  AGORA_STATS_FIELDS(AGORA_STATS_COMBINE_)
#undef AGORA_STATS_COMBINE_
}

double Stats::value(int i) const {
  int k = 0;
#define AGORA_STATS_VALUE_(kind, name, doc) \
  if (k++ == i) return (double)(name);
  AGORA_STATS_FIELDS(AGORA_STATS_VALUE_)
#undef AGORA_STATS_VALUE_
  return 0;
}

std::string Stats::text(int i) const {
  char buf[48];
  int k = 0;
#define AGORA_STATS_TEXT_(kind, name, doc)                                \
  if (k++ == i) {                                                         \
    if (AGORA_STAT_KIND_##kind == StatKind::Seconds)                      \
      std::snprintf(buf, sizeof buf, "%.6f", (double)(name));             \
    else                                                                  \
      std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)(name)); \
    return buf;                                                           \
  }
  AGORA_STATS_FIELDS(AGORA_STATS_TEXT_)
#undef AGORA_STATS_TEXT_
  return "";
}

std::string Stats::to_json() const {
  std::string s = "{";
  for (int i = 0; i < kFields; ++i) s += (i ? ", \"" : "\"") + std::string(kField[i].name) + "\": " + text(i);
  return s + "}";
}

std::string stats_report_json(const std::vector<Stats> &per_rank, const StatsRun &run) {
  Stats total;
  std::string s = "{\"schema\": " + std::to_string(AGORA_STATS_SCHEMA) +
                  ", \"agora_version\": " + json_string(AGORA_VERSION_STRING) +
                  ", \"protocol\": " + json_string(run.protocol) + ", \"nranks\": " + std::to_string(per_rank.size()) +
                  ", \"hosts\": [";
  for (size_t r = 0; r < run.hosts.size(); ++r) s += (r ? ", " : "") + json_string(run.hosts[r]);
  s += "], \"fields\": [";
  for (int i = 0; i < Stats::kFields; ++i)
    s += std::string(i ? ", " : "") + "{\"name\": \"" + Stats::kField[i].name + "\", \"kind\": \"" +
         kind_name(Stats::kField[i].kind) + "\", \"doc\": " + json_string(Stats::kField[i].doc) + "}";
  s += "], \"ranks\": [";
  for (size_t r = 0; r < per_rank.size(); ++r) {
    total.combine(per_rank[r]);
    std::string obj = per_rank[r].to_json();
    s += (r ? ", " : "") + ("{\"rank\": " + std::to_string(r) + ", " + obj.substr(1));
  }
  return s + "], \"totals\": " + total.to_json() + "}\n";
}

std::string stats_report_table(const std::vector<Stats> &per_rank, const StatsRun &run) {
  Stats total;
  for (const Stats &st : per_rank) total.combine(st);
  const bool each_rank = per_rank.size() <= kTableRankColumns;
  std::vector<std::string> columns;
  if (each_rank) {
    for (size_t r = 0; r < per_rank.size(); ++r) columns.push_back("rank " + std::to_string(r));
  } else {
    columns = {"min", "max"};
  }
  columns.push_back("job");

  std::string servers;
  if (run.memory_servers > 0)
    servers = " (" + std::to_string(per_rank.size() - run.memory_servers) + ".." + std::to_string(per_rank.size() - 1) +
              " memory servers)";
  std::string s = "agora statistics (protocol " + run.protocol + ", " + std::to_string(per_rank.size()) + " ranks" +
                  servers + "; job: counters and seconds summed over ranks, peaks the maximum)\n";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%-24s", "statistic");
  s += buf;
  for (const std::string &c : columns) {
    std::snprintf(buf, sizeof buf, " %12s", c.c_str());
    s += buf;
  }
  s += "\n";
  std::string zero;
  for (int i = 0; i < Stats::kFields; ++i) {
    bool any = std::any_of(per_rank.begin(), per_rank.end(), [&](const Stats &st) { return st.value(i) != 0; });
    if (!any) {
      zero += (zero.empty() ? "" : ", ") + std::string(Stats::kField[i].name);
      continue;
    }
    std::vector<std::string> cells;
    if (each_rank) {
      for (const Stats &st : per_rank) cells.push_back(st.text(i));
    } else {
      auto [lo, hi] = std::minmax_element(per_rank.begin(), per_rank.end(),
                                          [&](const Stats &a, const Stats &b) { return a.value(i) < b.value(i); });
      cells = {lo->text(i), hi->text(i)};
    }
    cells.push_back(total.text(i));
    std::snprintf(buf, sizeof buf, "%-24s", Stats::kField[i].name);
    s += buf;
    for (const std::string &c : cells) {
      std::snprintf(buf, sizeof buf, " %12s", c.c_str());
      s += buf;
    }
    s += "\n";
  }
  if (!zero.empty()) s += "zero on every rank: " + zero + "\n";
  return s;
}

}  // namespace agora
