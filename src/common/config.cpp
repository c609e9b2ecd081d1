#include "common/config.h"

#include <cctype>
#include <cstdlib>

namespace agora {

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
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: return false;
    }
    ++i;
    if (i < text.size() && std::toupper((unsigned char)text[i]) == 'B') ++i;  // "4GB"
    if (i < text.size() && (text[i] == 'i')) ++i;                              // "4Gi"
  }
  if (i != text.size()) return false;
  if (shift && (value >> (64 - shift)) != 0) return false;
  *bytes = value << shift;
  return true;
}

namespace {
const char *env(const char *name) {
  const char *v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

bool parse_bool(const char *name, const char *v, bool *out, std::string *error) {
  std::string s(v);
  if (s == "1" || s == "yes" || s == "on" || s == "true") { *out = true; return true; }
  if (s == "0" || s == "no" || s == "off" || s == "false") { *out = false; return true; }
  *error = std::string(name) + "=" + s + " is not a boolean; use 1 or 0";
  return false;
}
}  // namespace

bool config_from_env(Config *out, std::string *error,
                     const std::vector<std::string> &known_protocols) {
  Config c;
  if (const char *v = env("AGORA_PROTOCOL")) {
    c.protocol = v;
    bool known = false;
    std::string allowed;
    for (const auto &p : known_protocols) {
      known |= (p == c.protocol);
      allowed += (allowed.empty() ? "" : ", ") + p;
    }
    if (!known) {
      *error = "AGORA_PROTOCOL=" + c.protocol + " is not a protocol; allowed: " + allowed;
      return false;
    }
  }
  if (const char *v = env("AGORA_MEMORY")) {
    if (!parse_size(v, &c.memory_bytes) || c.memory_bytes < (1u << 20) ||
        c.memory_bytes > (64ull << 40)) {
      *error = std::string("AGORA_MEMORY=") + v +
               " is not a size between 1M and 64T; write e.g. 512M, 4G, 1T";
      return false;
    }
  }
  if (const char *v = env("AGORA_STATS")) {
    if (!parse_bool("AGORA_STATS", v, &c.print_stats, error)) return false;
  }
  if (const char *v = env("AGORA_STATS_JSON")) c.stats_json_path = v;
  if (const char *v = env("AGORA_SERVICE")) {
    std::string s(v);
    if (s == "adaptive") c.service = ServiceMode::Adaptive;
    else if (s == "poll") c.service = ServiceMode::Poll;
    else {
      *error = "AGORA_SERVICE=" + s + " is not a service mode; allowed: adaptive, poll";
      return false;
    }
  }
  if (const char *v = env("AGORA_SERVICE_SLEEP_US")) {
    char *end = nullptr;
    long us = std::strtol(v, &end, 10);
    if (*end || us < 1 || us > 1000000) {
      *error = std::string("AGORA_SERVICE_SLEEP_US=") + v +
               " is not a whole number of microseconds between 1 and 1000000";
      return false;
    }
    c.service_sleep_us = (uint32_t)us;
  }
  if (const char *v = env("AGORA_INTERVALS")) {
    std::string s(v);
    if (s == "lazy") c.intervals = IntervalPolicy::Lazy;
    else if (s == "aggressive") c.intervals = IntervalPolicy::Aggressive;
    else {
      *error = "AGORA_INTERVALS=" + s + " is not an interval policy; allowed: lazy, aggressive";
      return false;
    }
  }
  if (const char *v = env("AGORA_THREADS_PER_RANK")) {
    char *end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (*end || n < 1 || n > 65536) {
      *error = std::string("AGORA_THREADS_PER_RANK=") + v +
               " is not a whole number of threads between 1 and 65536";
      return false;
    }
    c.threads_per_rank = (uint32_t)n;
  }
  if (const char *v = env("AGORA_DEBUG")) {
    if (!parse_bool("AGORA_DEBUG", v, &c.debug, error)) return false;
  }
  *out = c;
  return true;
}

}  // namespace agora
