// The one table of every AGORA_* environment variable (rows in
// src/common/options.def). Parsing (config.cpp), agorarun's flags and its
// --help, agora-info and README's options table all come from it, so adding
// an option is one row there plus its Config member.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace agora {

struct Config;

enum class OptionKind : uint8_t {
  Protocol,  // a registered protocol's name (the registry knows them, not the table)
  Size,      // bytes: "4G", "512M", "65536" (parse_size), in [min, max]
  Count,     // a whole number in [min, max], of `what` (its unit)
  Signal,    // a signal number in [min, max] (the runtime checks the real-time range)
  Bool,      // 1/yes/on/true or 0/no/off/false
  Choice,    // one word of `choices` ("a|b|c"); an enum member gets the word's index
  String,    // any text (a path, a command); `what` says which
};

// The value of one variable once parsed: a number (Size, Count, Signal;
// Bool as 0/1; Choice as the word's index) or the text (Protocol, String).
struct OptionValue {
  uint64_t number = 0;
  std::string text;
};

// Fields in this order: the rows of options.def name them (designated
// initializers must follow declaration order).
struct OptionSpec {
  const char *variable;
  const char *flag = nullptr;  // agorarun's flag; nullptr: none
  OptionKind kind = OptionKind::String;
  const char *default_text = "";     // as documented ("" = unset)
  const char *value_name = "VALUE";  // the flag's value in help: SIZE, N, MODE
  uint64_t min = 0, max = 0;         // Size, Count, Signal
  const char *choices = "";          // Choice: "adaptive|poll"
  // The kind of value in messages: Choice/Protocol "a service mode" ("X=v is
  // not a service mode"); Count its unit ("seconds"); String what it is.
  const char *what = "";
  const char *hint = "";            // ends a bad value's message ("write e.g. 8M")
  const char *above_max = "";       // Size: why the maximum (replaces hint above it)
  const char *read_by = "runtime";  // who reads it: runtime, agoracc, sim_tests, ...
  const char *doc = "";             // one line
  const char *more = "";            // more detail (README)
  // Runtime options only: store a parsed value into its Config member, and
  // compare that member of two configs (default check in the tests).
  void (*assign)(Config *, const OptionValue &) = nullptr;
  bool (*same)(const Config &, const Config &) = nullptr;
};

// Every row of options.def, in its order (help, README and parsing order).
std::span<const OptionSpec> option_table();
// The row of `variable`, or nullptr.
const OptionSpec *option_find(const std::string &variable);

// Parses `text` as `spec`'s variable. False with *error naming the variable,
// the value and what is allowed ("AGORA_WAIT=x is not a wait mode; allowed:
// auto, spin, block"). `protocols` are the allowed values of a Protocol.
bool option_parse(const OptionSpec &spec, const std::string &text, const std::vector<std::string> &protocols,
                  OptionValue *out, std::string *error);

// The variable's text in the environment, or nullptr when unset or empty
// (an empty variable counts as unset).
const char *option_env(const OptionSpec &spec);

// Where a variable's value comes from. agorarun exports, next to the
// variables its flags set, AGORA_FROM_FLAGS: their names, colon-separated (like PATH).
enum class OptionSource { Default, Environment, Flag };
constexpr const char *kFromFlagsVariable = "AGORA_FROM_FLAGS";
OptionSource option_source(const OptionSpec &spec);
const char *option_source_name(OptionSource source);  // "default", "environment", "flag"

// What a value may be, for people: "1M..40T", "adaptive, poll",
// "1..1000000 (microseconds)"; `protocols` fills a Protocol's.
std::string option_allowed_text(const OptionSpec &spec, const std::vector<std::string> &protocols);
// "4G", "512M", "65536" -> bytes (K, M, G, T; "4GB", "4Gi" too). False on
// malformed input or overflow.
bool parse_size(const std::string &text, uint64_t *bytes);
// A size in bytes the way sizes are written: 1048576 -> "1M", 65537 -> "65537".
std::string option_size_text(uint64_t bytes);

}  // namespace agora
