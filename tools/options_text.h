// The renderings of the options table (src/common/options.def) that
// agora-info prints: agorarun's flag list and --help section, README's
// markdown table, and the listing of current values (text and JSON).
#pragma once
#include <string>
#include <vector>

namespace agora {

// "FLAG VARIABLE KIND [WHAT...]" per row with a flag, what tools/agorarun
// reads: KIND is switch (sets VARIABLE=1), value (takes any value) or number
// (takes a whole number; WHAT ends its usage message: "a whole number of
// seconds").
std::string options_flag_lines();

// The options section of `agorarun --help`: each flag, its value, what it
// does, its variable, default and allowed values; then the variables with no
// flag.
std::string options_help(const std::vector<std::string> &protocols);

// README's options table (markdown), the same whatever the environment.
std::string options_markdown(const std::vector<std::string> &protocols);

// Every variable's current value and where it came from (default,
// environment, flag); a bad value is shown with its error, never fatal.
std::string options_listing(const std::vector<std::string> &protocols);
// The same as JSON objects, one per row: "[{...}, ...]".
std::string options_json(const std::vector<std::string> &protocols);

// `text` as a JSON string literal.
std::string json_string(const std::string &text);

}  // namespace agora
