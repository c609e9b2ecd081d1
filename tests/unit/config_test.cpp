// Configuration parsing (src/common/config) through its public functions:
// parse_size, config_from_env for each variable (valid, invalid, out of
// range), unknown variables and the closest known name.
#include "common/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

extern char **environ;

namespace agora {
namespace {

TEST(ParseSize, UnitsAndSpellings) {
  uint64_t b = 0;
  EXPECT_TRUE(parse_size("0", &b));
  EXPECT_EQ(b, 0u);
  EXPECT_TRUE(parse_size("65536", &b));
  EXPECT_EQ(b, 65536u);
  EXPECT_TRUE(parse_size("4K", &b));
  EXPECT_EQ(b, 4096u);
  EXPECT_TRUE(parse_size("512m", &b));
  EXPECT_EQ(b, 512ull << 20);
  EXPECT_TRUE(parse_size("4G", &b));
  EXPECT_EQ(b, 4ull << 30);
  EXPECT_TRUE(parse_size("4GB", &b));
  EXPECT_EQ(b, 4ull << 30);
  EXPECT_TRUE(parse_size("4Gi", &b));
  EXPECT_EQ(b, 4ull << 30);
  EXPECT_TRUE(parse_size("2T", &b));
  EXPECT_EQ(b, 2ull << 40);
}

TEST(ParseSize, MalformedInputIsRefusedAndLeavesTheOutputAlone) {
  uint64_t b = 77;
  for (const char *bad : {"", "G", "-1", " 1", "1 ", "1.5G", "4X", "4GG", "4Gx", "0x10", "+5", "1e3"}) {
    EXPECT_FALSE(parse_size(bad, &b)) << bad;
    EXPECT_EQ(b, 77u) << bad;
  }
}

TEST(ParseSize, OverflowIsRefused) {
  uint64_t b = 0;
  EXPECT_TRUE(parse_size("18446744073709551615", &b));  // UINT64_MAX
  EXPECT_EQ(b, UINT64_MAX);
  EXPECT_FALSE(parse_size("18446744073709551616", &b));
  EXPECT_FALSE(parse_size("99999999999999999999999", &b));
  EXPECT_TRUE(parse_size("16777215T", &b));  // 2^24 - 1 TiB fits
  EXPECT_EQ(b, ((1ull << 24) - 1) << 40);
  EXPECT_FALSE(parse_size("16777216T", &b));  // 2^64
  EXPECT_TRUE(parse_size("17179869183G", &b));
  EXPECT_FALSE(parse_size("17179869184G", &b));
  EXPECT_FALSE(parse_size("18014398509481984K", &b));  // 2^54 K = 2^64
}

// Runs each test with no AGORA_* variable set, and puts them back after.
struct ConfigEnv : ::testing::Test {
  std::vector<std::pair<std::string, std::string>> saved;
  void SetUp() override {
    std::vector<std::string> names;
    for (char **e = environ; e && *e; ++e) {
      std::string entry(*e);
      if (entry.rfind("AGORA_", 0) != 0) continue;
      size_t eq = entry.find('=');
      saved.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
      names.push_back(entry.substr(0, eq));
    }
    for (auto &n : names) unsetenv(n.c_str());
  }
  void TearDown() override {
    clear();
    for (auto &[n, v] : saved) setenv(n.c_str(), v.c_str(), 1);
  }
  void clear() {
    std::vector<std::string> names;
    for (char **e = environ; e && *e; ++e) {
      std::string entry(*e);
      if (entry.rfind("AGORA_", 0) == 0) names.push_back(entry.substr(0, entry.find('=')));
    }
    for (auto &n : names) unsetenv(n.c_str());
  }
  // config_from_env with one variable set; the error message, or "" if accepted.
  std::string parse(const char *name, const char *value, Config *out = nullptr) {
    clear();
    setenv(name, value, 1);
    Config c;
    std::string error;
    bool ok = config_from_env(&c, &error, {"sc", "hlrc", "regc", "regc-page"});
    unsetenv(name);
    if (out) *out = c;
    if (ok)
      EXPECT_TRUE(error.empty());
    else
      EXPECT_FALSE(error.empty());
    return ok ? "" : error;
  }
};

TEST_F(ConfigEnv, DefaultsWithNothingSet) {
  Config c;
  c.memory_bytes = 1;
  std::string error;
  ASSERT_TRUE(config_from_env(&c, &error, {"sc"}));
  Config defaults;
  EXPECT_EQ(c.protocol, defaults.protocol);
  EXPECT_EQ(c.memory_bytes, 0u);  // chosen at start (src/memory/default_range_size.h)
  EXPECT_EQ(c.threads_per_rank, 1u);
  EXPECT_EQ(c.hang_timeout_s, 0u);
}

TEST_F(ConfigEnv, EmptyValueMeansUnset) {
  Config c;
  EXPECT_EQ(parse("AGORA_PROTOCOL", "", &c), "");
  EXPECT_EQ(c.protocol, "hlrc");  // the default: docs/running.md, "The default protocol"
}

TEST_F(ConfigEnv, Protocol) {
  Config c;
  EXPECT_EQ(parse("AGORA_PROTOCOL", "regc-page", &c), "");
  EXPECT_EQ(c.protocol, "regc-page");
  std::string e = parse("AGORA_PROTOCOL", "lrc");
  EXPECT_NE(e.find("AGORA_PROTOCOL=lrc"), std::string::npos) << e;
  EXPECT_NE(e.find("sc, hlrc, regc, regc-page"), std::string::npos) << e;
}

TEST_F(ConfigEnv, MemoryRange) {
  Config c;
  EXPECT_EQ(parse("AGORA_MEMORY", "1M", &c), "");
  EXPECT_EQ(c.memory_bytes, 1ull << 20);
  EXPECT_EQ(parse("AGORA_MEMORY", "40T", &c), "");
  EXPECT_NE(parse("AGORA_MEMORY", "1048575").find("between 1M and 40T"), std::string::npos);
  std::string big = parse("AGORA_MEMORY", "41T");
  EXPECT_NE(big.find("mapped twice"), std::string::npos) << big;
  EXPECT_NE(parse("AGORA_MEMORY", "lots").find("AGORA_MEMORY=lots"), std::string::npos);
  EXPECT_NE(parse("AGORA_MEMORY", "99999999999999999999").find("AGORA_MEMORY"), std::string::npos);
}

TEST_F(ConfigEnv, StackRange) {
  Config c;
  EXPECT_EQ(parse("AGORA_STACK", "64K", &c), "");
  EXPECT_EQ(c.stack_bytes, 64u << 10);
  EXPECT_EQ(parse("AGORA_STACK", "1T", &c), "");
  EXPECT_NE(parse("AGORA_STACK", "63K"), "");
  EXPECT_NE(parse("AGORA_STACK", "2T"), "");
  EXPECT_NE(parse("AGORA_STACK", "8Q"), "");
}

TEST_F(ConfigEnv, Booleans) {
  for (const char *name : {"AGORA_STATS", "AGORA_DEBUG"}) {
    for (const char *yes : {"1", "yes", "on", "true"}) {
      Config c;
      EXPECT_EQ(parse(name, yes, &c), "");
      EXPECT_TRUE(name == std::string("AGORA_STATS") ? c.print_stats : c.debug) << name << "=" << yes;
    }
    for (const char *no : {"0", "no", "off", "false"}) {
      Config c;
      EXPECT_EQ(parse(name, no, &c), "");
      EXPECT_FALSE(name == std::string("AGORA_STATS") ? c.print_stats : c.debug);
    }
    std::string e = parse(name, "maybe");
    EXPECT_NE(e.find("is not a boolean"), std::string::npos) << e;
    EXPECT_NE(parse(name, "TRUE"), "");  // case matters
  }
}

TEST_F(ConfigEnv, Choices) {
  Config c;
  EXPECT_EQ(parse("AGORA_SERVICE", "poll", &c), "");
  EXPECT_EQ(c.service, ServiceMode::Poll);
  EXPECT_NE(parse("AGORA_SERVICE", "sleepy").find("allowed: adaptive, poll"), std::string::npos);
  EXPECT_EQ(parse("AGORA_WAIT", "block", &c), "");
  EXPECT_EQ(c.wait, WaitMode::Block);
  EXPECT_NE(parse("AGORA_WAIT", "Spin").find("allowed: auto, spin, block"), std::string::npos);
  EXPECT_EQ(parse("AGORA_HEAP", "cyclic", &c), "");
  EXPECT_EQ(c.heap, HeapPlacement::Cyclic);
  EXPECT_NE(parse("AGORA_HEAP", "striped").find("allowed: local, block, cyclic"), std::string::npos);
  EXPECT_EQ(parse("AGORA_INTERVALS", "aggressive", &c), "");
  EXPECT_EQ(c.intervals, IntervalPolicy::Aggressive);
  EXPECT_NE(parse("AGORA_INTERVALS", "eager").find("allowed: lazy, aggressive"), std::string::npos);
}

TEST_F(ConfigEnv, CountsAndTheirRanges) {
  struct Case {
    const char *name;
    const char *lowest, *highest, *below, *above;
  };
  for (const Case &k : {Case{"AGORA_SERVICE_SLEEP_US", "1", "1000000", "0", "1000001"},
                        Case{"AGORA_THREADS_PER_RANK", "1", "65536", "0", "65537"},
                        Case{"AGORA_HANG_WARN", "1", "31536000", "0", "31536001"},
                        Case{"AGORA_HANG_TIMEOUT", "0", "31536000", "-1", "31536001"}}) {
    EXPECT_EQ(parse(k.name, k.lowest), "") << k.name;
    EXPECT_EQ(parse(k.name, k.highest), "") << k.name;
    std::string e = parse(k.name, k.below);
    EXPECT_NE(e.find(std::string(k.name) + "=" + k.below), std::string::npos) << e;
    EXPECT_NE(e.find("between"), std::string::npos) << e;
    EXPECT_NE(parse(k.name, k.above), "") << k.name;
    EXPECT_NE(parse(k.name, "12abc"), "") << k.name;
    EXPECT_NE(parse(k.name, "99999999999999999999999"), "") << k.name;  // overflows long
  }
  Config c;
  EXPECT_EQ(parse("AGORA_THREADS_PER_RANK", "4", &c), "");
  EXPECT_EQ(c.threads_per_rank, 4u);
}

TEST_F(ConfigEnv, DoorbellSignal) {
  Config c;
  EXPECT_EQ(parse("AGORA_DOORBELL_SIGNAL", "40", &c), "");
  EXPECT_EQ(c.doorbell_signal, 40u);
  for (const char *bad : {"0", "65", "SIGUSR1"}) {
    std::string e = parse("AGORA_DOORBELL_SIGNAL", bad);
    EXPECT_NE(e.find("is not a signal number"), std::string::npos) << bad << ": " << e;
  }
}

TEST_F(ConfigEnv, StatsJsonPathIsTakenAsIs) {
  Config c;
  EXPECT_EQ(parse("AGORA_STATS_JSON", "/tmp/x y.json", &c), "");
  EXPECT_EQ(c.stats_json_path, "/tmp/x y.json");
}

TEST_F(ConfigEnv, OneBadVariableLeavesTheOutputUntouched) {
  setenv("AGORA_THREADS_PER_RANK", "3", 1);
  setenv("AGORA_WAIT", "never", 1);
  Config c;
  c.threads_per_rank = 99;
  std::string error;
  EXPECT_FALSE(config_from_env(&c, &error, {"sc"}));
  EXPECT_EQ(c.threads_per_rank, 99u);
  EXPECT_NE(error.find("AGORA_WAIT=never"), std::string::npos);
}

TEST_F(ConfigEnv, UnknownVariablesAreNamedWithASuggestion) {
  EXPECT_TRUE(config_unknown_variables().empty());
  setenv("AGORA_PROTOCL", "sc", 1);
  setenv("AGORA_MEMORY", "1G", 1);  // known: no message
  setenv("AGORA_ZZZZZZZZZZZZ", "1", 1);
  auto messages = config_unknown_variables();
  ASSERT_EQ(messages.size(), 2u);
  std::string all = messages[0] + "\n" + messages[1];
  EXPECT_NE(all.find("unknown variable AGORA_PROTOCL (did you mean AGORA_PROTOCOL?); it is ignored"), std::string::npos)
      << all;
  EXPECT_NE(all.find("unknown variable AGORA_ZZZZZZZZZZZZ (no known variable is close"), std::string::npos) << all;
  setenv("NOT_AGORA_PROTOCL", "1", 1);  // other prefixes are not Agora's business
  EXPECT_EQ(config_unknown_variables().size(), 2u);
  unsetenv("NOT_AGORA_PROTOCL");
}

TEST(ConfigClosestVariable, Suggestions) {
  EXPECT_EQ(config_closest_variable("AGORA_PROTOCOL"), "AGORA_PROTOCOL");
  EXPECT_EQ(config_closest_variable("AGORA_PROTOCL"), "AGORA_PROTOCOL");
  EXPECT_EQ(config_closest_variable("AGORA_MEMROY"), "AGORA_MEMORY");
  EXPECT_EQ(config_closest_variable("AGORA_THREADS"), "AGORA_THREADS_PER_RANK");  // a prefix
  EXPECT_EQ(config_closest_variable("AGORA_HANG_TIMOUT"), "AGORA_HANG_TIMEOUT");
  EXPECT_EQ(config_closest_variable("AGORA_XYZ"), "");
  EXPECT_EQ(config_closest_variable("AGORA_COMPLETELY_DIFFERENT"), "");
}

}  // namespace
}  // namespace agora
