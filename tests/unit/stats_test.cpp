// Statistics made from AGORA_STATS_FIELDS: the field table, combining ranks
// (sums; peaks as maxima), the JSON document and the table.
#include "common/stats.h"

#include <gtest/gtest.h>

#include <string>

namespace agora {
namespace {

TEST(Stats, FieldTableFollowsTheList) {
  EXPECT_EQ(Stats::kFields, 46);
  EXPECT_STREQ(Stats::kField[0].name, "read_faults");
  EXPECT_EQ(Stats::kField[0].kind, StatKind::Counter);
  int peaks = 0, seconds = 0;
  for (const StatField &f : Stats::kField) {
    EXPECT_TRUE(f.doc && *f.doc) << f.name;
    peaks += f.kind == StatKind::Peak;
    seconds += f.kind == StatKind::Seconds;
  }
  EXPECT_EQ(peaks, 2);  // notices_kept_peak, cache_resident_peak
  EXPECT_EQ(seconds, 2);
}

TEST(Stats, StartsAtZeroAndConvertsToThePublicStruct) {
  Stats s;
  for (int i = 0; i < Stats::kFields; ++i) EXPECT_EQ(s.value(i), 0) << Stats::kField[i].name;
  s.pages_fetched = 7;
  agora_stats_t pub = s;
  EXPECT_EQ(pub.pages_fetched, 7u);
  EXPECT_EQ(Stats(pub).pages_fetched, 7u);
}

TEST(Stats, CombineSumsCountersAndSecondsAndMaxesPeaks) {
  Stats a, b;
  a.read_faults = 3;
  b.read_faults = 4;
  a.notices_kept_peak = 9;
  b.notices_kept_peak = 5;
  a.fault_time_s = 0.25;
  b.fault_time_s = 0.5;
  Stats job;
  job.combine(a);
  job.combine(b);
  EXPECT_EQ(job.read_faults, 7u);
  EXPECT_EQ(job.notices_kept_peak, 9u);  // the most any rank held, not 14
  EXPECT_DOUBLE_EQ(job.fault_time_s, 0.75);
}

TEST(Stats, JsonHasSchemaMetadataAndEveryField) {
  Stats a, b;
  a.read_faults = 1;
  a.notices_kept_peak = 2;
  b.notices_kept_peak = 6;
  b.sync_time_s = 1.5;
  std::string j = stats_report_json({a, b}, {"hlrc", {"node-a", "node\"b"}});
  EXPECT_EQ(j.rfind("{\"schema\": " + std::to_string(AGORA_STATS_SCHEMA) + ", ", 0), 0u) << j;
  EXPECT_NE(j.find("\"agora_version\": \"" AGORA_VERSION_STRING "\""), std::string::npos);
  EXPECT_NE(j.find("\"protocol\": \"hlrc\""), std::string::npos);
  EXPECT_NE(j.find("\"nranks\": 2"), std::string::npos);
  EXPECT_NE(j.find("\"hosts\": [\"node-a\", \"node\\\"b\"]"), std::string::npos) << j;
  EXPECT_NE(j.find("{\"name\": \"notices_kept_peak\", \"kind\": \"peak\""), std::string::npos);
  std::string totals = j.substr(j.find("\"totals\""));
  EXPECT_NE(totals.find("\"notices_kept_peak\": 6,"), std::string::npos) << totals;
  EXPECT_NE(totals.find("\"sync_time_s\": 1.500000,"), std::string::npos) << totals;
  for (const StatField &f : Stats::kField)
    EXPECT_NE(totals.find(std::string("\"") + f.name + "\": "), std::string::npos) << f.name;
}

TEST(Stats, TableHasARowPerNonZeroStatisticAndTheJobColumn) {
  Stats a, b;
  a.read_faults = 10;
  b.read_faults = 5;
  a.notices_kept_peak = 3;
  b.notices_kept_peak = 8;
  std::string t = stats_report_table({a, b}, {"hlrc", {}});
  EXPECT_NE(t.find("rank 0"), std::string::npos) << t;
  EXPECT_NE(t.find("rank 1"), std::string::npos) << t;
  EXPECT_NE(t.find("read_faults                        10            5           15\n"), std::string::npos) << t;
  EXPECT_NE(t.find("notices_kept_peak                   3            8            8\n"), std::string::npos) << t;
  EXPECT_NE(t.find("zero on every rank: write_faults,"), std::string::npos) << t;
  EXPECT_EQ(t.find("\ntwins "), std::string::npos) << t;
}

TEST(Stats, WideJobsGetMinAndMaxColumns) {
  std::vector<Stats> ranks(kTableRankColumns + 1);
  for (size_t r = 0; r < ranks.size(); ++r) ranks[r].barriers = r + 1;
  std::string t = stats_report_table(ranks, {"sc", {}});
  EXPECT_EQ(t.find("rank 0"), std::string::npos) << t;
  EXPECT_NE(t.find("barriers                            1            9           45\n"), std::string::npos) << t;
}

}  // namespace
}  // namespace agora
