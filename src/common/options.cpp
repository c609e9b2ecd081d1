#include "common/options.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "common/config.h"

namespace agora {

namespace {
// Stores a parsed value into a Config member of any option type.
template <typename T>
void assign_member(T *member, const OptionValue &value) {
  if constexpr (std::is_same_v<T, std::string>)
    *member = value.text;
  else if constexpr (std::is_same_v<T, bool>)
    *member = value.number != 0;
  else
    *member = static_cast<T>(value.number);  // integers, and enums by choice index
}

// Constant-initialized (no constructor runs): program mode starts Agora from
// a constructor, which may run before this file's dynamic initializers.
constexpr OptionSpec kOptions[] = {
#define AGORA_OPTION(member, ...)                                                                          \
  OptionSpec{__VA_ARGS__, .assign = [](Config *c, const OptionValue &v) { assign_member(&c->member, v); }, \
             .same = [](const Config &a, const Config &b) { return a.member == b.member; }},
#define AGORA_VARIABLE(...) OptionSpec{__VA_ARGS__},
#include "common/options.def"
#undef AGORA_OPTION
#undef AGORA_VARIABLE
};

// The words of "a|b|c".
std::vector<std::string> choice_words(const char *choices) {
  std::vector<std::string> words;
  std::string all(choices);
  for (size_t start = 0; start <= all.size();) {
    size_t bar = all.find('|', start);
    if (bar == std::string::npos) bar = all.size();
    if (bar > start) words.push_back(all.substr(start, bar - start));
    start = bar + 1;
  }
  return words;
}

std::string joined(const std::vector<std::string> &words) {
  std::string text;
  for (const auto &w : words) text += (text.empty() ? "" : ", ") + w;
  return text;
}

bool parse_bool(const std::string &s, uint64_t *out) {
  if (s == "1" || s == "yes" || s == "on" || s == "true") {
    *out = 1;
    return true;
  }
  if (s == "0" || s == "no" || s == "off" || s == "false") {
    *out = 0;
    return true;
  }
  return false;
}

// A whole number in [lo, hi], as strtol reads it.
bool parse_whole(const std::string &s, uint64_t lo, uint64_t hi, uint64_t *out) {
  char *end = nullptr;
  long n = std::strtol(s.c_str(), &end, 10);
  if (*end || n < 0 || (uint64_t)n < lo || (uint64_t)n > hi) return false;
  *out = (uint64_t)n;
  return true;
}
}  // namespace

std::span<const OptionSpec> option_table() { return kOptions; }

const OptionSpec *option_find(const std::string &variable) {
  for (const OptionSpec &spec : kOptions)
    if (variable == spec.variable) return &spec;
  return nullptr;
}

bool parse_size(const std::string &text, uint64_t *bytes) {
  if (text.empty() || !std::isdigit((unsigned char)text[0])) return false;
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && std::isdigit((unsigned char)text[i])) {
    uint64_t next = value * 10 + (text[i] - '0');
    if (next / 10 != value) return false;
    value = next;
    ++i;
  }
  unsigned shift = 0;
  if (i < text.size()) {
    switch (std::toupper((unsigned char)text[i])) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        return false;
    }
    ++i;
    if (i < text.size() && std::toupper((unsigned char)text[i]) == 'B') ++i;  // "4GB"
    if (i < text.size() && (text[i] == 'i')) ++i;                             // "4Gi"
  }
  if (i != text.size()) return false;
  if (shift && (value >> (64 - shift)) != 0) return false;
  *bytes = value << shift;
  return true;
}

std::string option_size_text(uint64_t bytes) {
  static const char units[] = "KMGT";
  int unit = -1;
  while (unit < 3 && bytes && bytes % 1024 == 0) bytes /= 1024, ++unit;
  return std::to_string(bytes) + (unit >= 0 ? std::string(1, units[unit]) : "");
}

bool option_parse(const OptionSpec &spec, const std::string &text, const std::vector<std::string> &protocols,
                  OptionValue *out, std::string *error) {
  const std::string head = std::string(spec.variable) + "=" + text;
  OptionValue value;
  value.text = text;
  switch (spec.kind) {
    case OptionKind::Protocol:
    case OptionKind::Choice: {
      std::vector<std::string> words = spec.kind == OptionKind::Protocol ? protocols : choice_words(spec.choices);
      for (size_t i = 0; i < words.size(); ++i) {
        if (words[i] == text) {
          value.number = i;
          *out = value;
          return true;
        }
      }
      *error = head + " is not " + spec.what + "; allowed: " + joined(words);
      return false;
    }
    case OptionKind::Size: {
      bool parsed = parse_size(text, &value.number);
      if (parsed && value.number >= spec.min && value.number <= spec.max) break;
      bool too_large = parsed && value.number > spec.max && *spec.above_max;
      *error = head + " is not a size between " + option_size_text(spec.min) + " and " + option_size_text(spec.max) +
               (too_large ? std::string(" (") + spec.above_max + ")" : std::string("; ") + spec.hint);
      return false;
    }
    case OptionKind::Count:
      if (parse_whole(text, spec.min, spec.max, &value.number)) break;
      *error = head + " is not a whole number of " + spec.what + " between " + std::to_string(spec.min) + " and " +
               std::to_string(spec.max);
      return false;
    case OptionKind::Signal:
      if (parse_whole(text, spec.min, spec.max, &value.number)) break;
      *error = head + " is not a signal number; " + spec.hint;
      return false;
    case OptionKind::Bool:
      if (parse_bool(text, &value.number)) break;
      *error = head + " is not a boolean; use 1 or 0";
      return false;
    case OptionKind::String:
      break;
  }
  *out = value;
  return true;
}

const char *option_env(const OptionSpec &spec) {
  const char *v = std::getenv(spec.variable);
  return (v && *v) ? v : nullptr;
}

OptionSource option_source(const OptionSpec &spec) {
  if (!option_env(spec)) return OptionSource::Default;
  const char *flags = std::getenv(kFromFlagsVariable);
  std::string list = std::string(":") + (flags ? flags : "") + ":";
  if (list.find(std::string(":") + spec.variable + ":") != std::string::npos) return OptionSource::Flag;
  return OptionSource::Environment;
}

const char *option_source_name(OptionSource source) {
  switch (source) {
    case OptionSource::Default:
      return "default";
    case OptionSource::Environment:
      return "environment";
    case OptionSource::Flag:
      return "flag";
  }
  return "?";
}

std::string option_allowed_text(const OptionSpec &spec, const std::vector<std::string> &protocols) {
  switch (spec.kind) {
    case OptionKind::Protocol:
      return joined(protocols);
    case OptionKind::Choice:
      return joined(choice_words(spec.choices));
    case OptionKind::Size:
      return option_size_text(spec.min) + ".." + option_size_text(spec.max);
    case OptionKind::Count:
      return std::to_string(spec.min) + ".." + std::to_string(spec.max) + " " + spec.what;
    case OptionKind::Signal:
      return "a real-time signal number";
    case OptionKind::Bool:
      return "1 or 0";
    case OptionKind::String:
      return spec.what;
  }
  return "";
}

}  // namespace agora
