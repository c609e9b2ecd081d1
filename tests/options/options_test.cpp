// The options table (src/common/options.def) and config_from_env, which it
// drives: the table's own consistency, each kind's parsing and messages,
// and where a value came from.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "common/config.h"
#include "common/options.h"

namespace agora {
namespace {

const std::vector<std::string> kProtocols = {"sc", "hlrc", "regc", "regc-page"};

// Runs with no AGORA_* variable but those a test sets.
class Options : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const OptionSpec &spec : option_table()) unsetenv(spec.variable);
  }
  void TearDown() override { SetUp(); }
  // config_from_env with one variable set: its error, or "" on success.
  std::string parse_error(const char *variable, const char *value, Config *config = nullptr) {
    setenv(variable, value, 1);
    Config c;
    std::string error;
    bool ok = config_from_env(&c, &error, kProtocols);
    unsetenv(variable);
    if (config) *config = c;
    return ok ? "" : error;
  }
};

TEST_F(Options, TableIsConsistent) {
  std::set<std::string> variables, flags;
  size_t runtime = 0;
  for (const OptionSpec &spec : option_table()) {
    std::string name = spec.variable;
    EXPECT_EQ(name.rfind("AGORA_", 0), 0u) << name;
    EXPECT_TRUE(variables.insert(name).second) << "twice: " << name;
    EXPECT_EQ(option_find(name), &spec);
    EXPECT_STRNE(spec.doc, "") << name << " has no doc";
    if (spec.flag) {
      EXPECT_EQ(std::string(spec.flag).rfind("--", 0), 0u) << spec.flag;
      EXPECT_TRUE(flags.insert(spec.flag).second) << "twice: " << spec.flag;
    }
    EXPECT_EQ(spec.assign != nullptr, spec.same != nullptr) << name;
    if (spec.assign) {
      ++runtime;
      EXPECT_TRUE(spec.flag) << name << " is read by the runtime but has no flag";
    }
    if (spec.kind == OptionKind::Size || spec.kind == OptionKind::Count || spec.kind == OptionKind::Signal) {
      EXPECT_LE(spec.min, spec.max) << name;
    }
    if (spec.kind == OptionKind::Choice) {
      EXPECT_STRNE(spec.choices, "") << name;
    }
  }
  EXPECT_EQ(option_find("AGORA_NOTHING"), nullptr);
  EXPECT_GE(runtime, 15u);
  for (const char *other : {"AGORA_CC", "AGORA_CXX", "AGORA_CC_MODE", "AGORA_SIM_SEED", "AGORA_SIM_SEEDS",
                            "AGORA_SIM_POLICY", "AGORA_FROM_FLAGS"})
    EXPECT_TRUE(option_find(other)) << other;
}

// A row's default, parsed into a Config, is the member's initializer.
TEST_F(Options, DefaultsMatchConfigInitializers) {
  const Config defaults;
  for (const OptionSpec &spec : option_table()) {
    if (!spec.assign || !*spec.default_text) continue;
    OptionValue value;
    std::string error;
    if (spec.kind == OptionKind::Signal) continue;  // its default is "the first free one"
    ASSERT_TRUE(option_parse(spec, spec.default_text, kProtocols, &value, &error)) << error;
    Config c;
    spec.assign(&c, value);
    EXPECT_TRUE(spec.same(c, defaults)) << spec.variable << "'s default " << spec.default_text
                                        << " is not Config's initializer";
  }
  Config c;
  std::string error;
  ASSERT_TRUE(config_from_env(&c, &error, kProtocols)) << error;
  for (const OptionSpec &spec : option_table()) {
    if (spec.same) {
      EXPECT_TRUE(spec.same(c, defaults)) << spec.variable;
    }
  }
}

// A choice's word index is its enum value (the enums' order = the row's choices).
TEST_F(Options, ChoicesMapToEnums) {
  Config c;
  EXPECT_EQ(parse_error("AGORA_SERVICE", "poll", &c), "");
  EXPECT_EQ(c.service, ServiceMode::Poll);
  EXPECT_EQ(parse_error("AGORA_WAIT", "block", &c), "");
  EXPECT_EQ(c.wait, WaitMode::Block);
  EXPECT_EQ(parse_error("AGORA_WAIT", "spin", &c), "");
  EXPECT_EQ(c.wait, WaitMode::Spin);
  EXPECT_EQ(parse_error("AGORA_HEAP", "cyclic", &c), "");
  EXPECT_EQ(c.heap, HeapPlacement::Cyclic);
  EXPECT_EQ(parse_error("AGORA_HEAP", "block", &c), "");
  EXPECT_EQ(c.heap, HeapPlacement::Block);
  EXPECT_EQ(parse_error("AGORA_INTERVALS", "aggressive", &c), "");
  EXPECT_EQ(c.intervals, IntervalPolicy::Aggressive);
  EXPECT_EQ(parse_error("AGORA_PROTOCOL", "regc-page", &c), "");
  EXPECT_EQ(c.protocol, "regc-page");
}

TEST_F(Options, ValuesOfEachKind) {
  Config c;
  EXPECT_EQ(parse_error("AGORA_MEMORY", "16g", &c), "");
  EXPECT_EQ(c.memory_bytes, 16ull << 30);
  EXPECT_EQ(parse_error("AGORA_MEMORY", "1Gi", &c), "");
  EXPECT_EQ(c.memory_bytes, 1ull << 30);
  EXPECT_EQ(parse_error("AGORA_STACK", "65536", &c), "");
  EXPECT_EQ(c.stack_bytes, 65536u);
  EXPECT_EQ(parse_error("AGORA_HANG_TIMEOUT", "0", &c), "");
  EXPECT_EQ(c.hang_timeout_s, 0u);
  EXPECT_EQ(parse_error("AGORA_THREADS_PER_RANK", "65536", &c), "");
  EXPECT_EQ(c.threads_per_rank, 65536u);
  EXPECT_EQ(parse_error("AGORA_DOORBELL_SIGNAL", "40", &c), "");
  EXPECT_EQ(c.doorbell_signal, 40u);
  EXPECT_EQ(parse_error("AGORA_STATS", "yes", &c), "");
  EXPECT_TRUE(c.print_stats);
  EXPECT_EQ(parse_error("AGORA_DEBUG", "off", &c), "");
  EXPECT_FALSE(c.debug);
  EXPECT_EQ(parse_error("AGORA_STATS_JSON", "/tmp/s.json", &c), "");
  EXPECT_EQ(c.stats_json_path, "/tmp/s.json");
  EXPECT_EQ(parse_error("AGORA_TRACE", "/tmp/trace", &c), "");
  EXPECT_EQ(c.trace_dir, "/tmp/trace");
  EXPECT_EQ(parse_error("AGORA_PROFILE", "1", &c), "");
  EXPECT_TRUE(c.profile);
  // An empty variable counts as unset.
  EXPECT_EQ(parse_error("AGORA_MEMORY", "", &c), "");
  EXPECT_EQ(c.memory_bytes, Config().memory_bytes);
}

// The messages the runtime stops with (tests/mpi checks some end to end).
TEST_F(Options, BadValueMessages) {
  EXPECT_EQ(parse_error("AGORA_PROTOCOL", "nonsense"),
            "AGORA_PROTOCOL=nonsense is not a protocol; allowed: sc, hlrc, regc, regc-page");
  EXPECT_EQ(parse_error("AGORA_MEMORY", "12Q"),
            "AGORA_MEMORY=12Q is not a size between 1M and 40T; write e.g. 512M, 4G, 1T");
  EXPECT_EQ(parse_error("AGORA_MEMORY", "1023K"),
            "AGORA_MEMORY=1023K is not a size between 1M and 40T; write e.g. 512M, 4G, 1T");
  EXPECT_EQ(parse_error("AGORA_MEMORY", "48T"),
            "AGORA_MEMORY=48T is not a size between 1M and 40T (the range is mapped twice, and a 128 TiB "
            "address space holds two 40 TiB ranges beside the program, its heap and libraries)");
  EXPECT_EQ(parse_error("AGORA_MEMORY", "99999999999999999999"),
            "AGORA_MEMORY=99999999999999999999 is not a size between 1M and 40T; write e.g. 512M, 4G, 1T");
  EXPECT_EQ(parse_error("AGORA_STACK", "2T"), "AGORA_STACK=2T is not a size between 64K and 1T; write e.g. 8M, 64M");
  EXPECT_EQ(parse_error("AGORA_STATS", "maybe"), "AGORA_STATS=maybe is not a boolean; use 1 or 0");
  EXPECT_EQ(parse_error("AGORA_SERVICE", "lazy"), "AGORA_SERVICE=lazy is not a service mode; allowed: adaptive, poll");
  EXPECT_EQ(parse_error("AGORA_WAIT", "x"), "AGORA_WAIT=x is not a wait mode; allowed: auto, spin, block");
  EXPECT_EQ(parse_error("AGORA_HEAP", "x"), "AGORA_HEAP=x is not a heap placement; allowed: local, block, cyclic");
  EXPECT_EQ(parse_error("AGORA_INTERVALS", "x"),
            "AGORA_INTERVALS=x is not an interval policy; allowed: lazy, aggressive");
  EXPECT_EQ(parse_error("AGORA_SERVICE_SLEEP_US", "0"),
            "AGORA_SERVICE_SLEEP_US=0 is not a whole number of microseconds between 1 and 1000000");
  EXPECT_EQ(parse_error("AGORA_THREADS_PER_RANK", "-1"),
            "AGORA_THREADS_PER_RANK=-1 is not a whole number of threads between 1 and 65536");
  EXPECT_EQ(parse_error("AGORA_HANG_WARN", "5s"),
            "AGORA_HANG_WARN=5s is not a whole number of seconds between 1 and 31536000");
  EXPECT_EQ(parse_error("AGORA_DOORBELL_SIGNAL", "SIGUSR1"),
            "AGORA_DOORBELL_SIGNAL=SIGUSR1 is not a signal number; give a real-time signal's number "
            "(SIGRTMIN..SIGRTMAX, e.g. 40), or leave it unset for the first free one from SIGRTMIN+5");
  EXPECT_EQ(parse_error("AGORA_DOORBELL_SIGNAL", "65"),
            "AGORA_DOORBELL_SIGNAL=65 is not a signal number; give a real-time signal's number "
            "(SIGRTMIN..SIGRTMAX, e.g. 40), or leave it unset for the first free one from SIGRTMIN+5");
}

// Variables read by something else are known but not parsed by the runtime.
TEST_F(Options, OtherVariablesAreNotParsed) {
  EXPECT_EQ(parse_error("AGORA_CC_MODE", "nonsense"), "");
  EXPECT_EQ(parse_error("AGORA_SIM_POLICY", "nonsense"), "");
  setenv("AGORA_SIM_SEED", "3", 1);
  setenv("AGORA_PROTOCL", "x", 1);
  std::vector<std::string> unknown = config_unknown_variables();
  unsetenv("AGORA_PROTOCL");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0], "unknown variable AGORA_PROTOCL (did you mean AGORA_PROTOCOL?); it is ignored");
  EXPECT_EQ(config_closest_variable("AGORA_THREADS"), "AGORA_THREADS_PER_RANK");
  EXPECT_EQ(config_closest_variable("AGORA_XYZZY"), "");
}

TEST_F(Options, Sources) {
  const OptionSpec &memory = *option_find("AGORA_MEMORY");
  EXPECT_EQ(option_source(memory), OptionSource::Default);
  setenv("AGORA_MEMORY", "2G", 1);
  EXPECT_EQ(option_source(memory), OptionSource::Environment);
  setenv("AGORA_FROM_FLAGS", "AGORA_MEMORY_X:AGORA_WAIT", 1);  // not a prefix match
  EXPECT_EQ(option_source(memory), OptionSource::Environment);
  setenv("AGORA_FROM_FLAGS", "AGORA_WAIT:AGORA_MEMORY", 1);
  EXPECT_EQ(option_source(memory), OptionSource::Flag);
  EXPECT_STREQ(option_source_name(option_source(memory)), "flag");
  unsetenv("AGORA_MEMORY");
  EXPECT_EQ(option_source(memory), OptionSource::Default);  // named, but unset
}

TEST(OptionSizes, ParseAndPrint) {
  uint64_t bytes = 0;
  EXPECT_TRUE(parse_size("4GB", &bytes));
  EXPECT_EQ(bytes, 4ull << 30);
  EXPECT_TRUE(parse_size("512m", &bytes));
  EXPECT_EQ(bytes, 512ull << 20);
  EXPECT_FALSE(parse_size("", &bytes));
  EXPECT_FALSE(parse_size("G", &bytes));
  EXPECT_FALSE(parse_size("4X", &bytes));
  EXPECT_FALSE(parse_size("4GBx", &bytes));
  EXPECT_FALSE(parse_size("16777216T", &bytes));  // 2^64: overflow
  EXPECT_TRUE(parse_size("16777215T", &bytes));
  EXPECT_EQ(option_size_text(1ull << 20), "1M");
  EXPECT_EQ(option_size_text(40ull << 40), "40T");
  EXPECT_EQ(option_size_text(64ull << 10), "64K");
  EXPECT_EQ(option_size_text(1536), "1536");
  EXPECT_EQ(option_size_text(0), "0");
}

}  // namespace
}  // namespace agora
