#include "common/config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <unistd.h>  // environ
#include <utility>

namespace agora {

namespace {
// Every AGORA_* environment variable anything in Agora reads. A variable set
// in the environment but missing here draws a warning, so a new variable
// must be added here (and to tools/agorarun --help when it has a flag).
// init_priority: constructed before program mode starts Agora from a
// constructor of priority 102 (src/program/program_start.c).
__attribute__((init_priority(101))) const std::vector<std::string> kKnownVariables = {
    // runtime (config_from_env and the services it configures)
    "AGORA_PROTOCOL", "AGORA_MEMORY", "AGORA_STATS", "AGORA_STATS_JSON", "AGORA_SERVICE",
    "AGORA_SERVICE_SLEEP_US", "AGORA_DEBUG", "AGORA_THREADS_PER_RANK", "AGORA_INTERVALS",
    "AGORA_WAIT", "AGORA_DOORBELL_SIGNAL", "AGORA_HANG_TIMEOUT", "AGORA_HANG_WARN",
    "AGORA_STACK", "AGORA_HEAP",
    "AGORA_TRACE", "AGORA_TRACE_EVENTS", "AGORA_PROFILE",
    // the compiler wrappers agoracc / agoracxx (tools/agoracc.in): set in a
    // shell that also runs agorarun, they must not draw a warning
    "AGORA_CC", "AGORA_CXX", "AGORA_CC_MODE",
    // simulator tests (tests/sim): replay of a seed
    "AGORA_SIM_SEED", "AGORA_SIM_SEEDS", "AGORA_SIM_POLICY",
};

size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string config_closest_variable(const std::string &name) {
  // A shortened name (AGORA_THREADS for AGORA_THREADS_PER_RANK) counts as
  // one edit away; ties go to the fewest real edits.
  std::string best;
  std::pair<size_t, size_t> best_distance{SIZE_MAX, SIZE_MAX};
  for (const auto &known : kKnownVariables) {
    size_t d = edit_distance(name, known);
    std::pair<size_t, size_t> distance{known.rfind(name, 0) == 0 ? std::min<size_t>(d, 1) : d, d};
    if (distance < best_distance) best = known, best_distance = distance;
  }
  // A suggestion that changes most of the name would mislead.
  size_t suffix = name.size() > 6 ? name.size() - 6 : 0;  // after "AGORA_"
  return best_distance.first <= std::max<size_t>(2, suffix / 2) ? best : std::string();
}

std::vector<std::string> config_unknown_variables() {
  std::vector<std::string> messages;
  for (char **entry = environ; entry && *entry; ++entry) {
    std::string name(*entry);
    name = name.substr(0, name.find('='));
    if (name.rfind("AGORA_", 0) != 0) continue;
    if (std::find(kKnownVariables.begin(), kKnownVariables.end(), name) != kKnownVariables.end())
      continue;
    std::string closest = config_closest_variable(name);
    messages.push_back("unknown variable " + name +
                       (closest.empty() ? " (no known variable is close; agorarun --help lists them)"
                                        : " (did you mean " + closest + "?)") +
                       "; it is ignored");
  }
  return messages;
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
// A whole number in [lo, hi]; `unit` names what it counts in the message.
bool parse_count(const char *name, const char *v, long lo, long hi, const char *unit,
                 uint32_t *out, std::string *error) {
  char *end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end || n < lo || n > hi) {
    *error = std::string(name) + "=" + v + " is not a whole number of " + unit + " between " +
             std::to_string(lo) + " and " + std::to_string(hi);
    return false;
  }
  *out = (uint32_t)n;
  return true;
}

// One of `names` (index into `values`); `what` names the kind in the message.
template <typename T>
bool parse_choice(const char *name, const char *v, const std::vector<std::pair<const char *, T>> &choices,
                  const char *what, T *out, std::string *error) {
  std::string allowed;
  for (const auto &[text, value] : choices) {
    if (text == std::string(v)) {
      *out = value;
      return true;
    }
    allowed += (allowed.empty() ? "" : ", ") + std::string(text);
  }
  *error = std::string(name) + "=" + v + " is not " + what + "; allowed: " + allowed;
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
    // 40T: the range is mapped twice (application and service views), and
    // a 128 TiB user address space with the program, heap, libraries and
    // stacks in it has two 40 TiB holes to spare, whatever ASLR does
    // (docs/memory.md). Start-up checks what this process really has.
    bool parsed = parse_size(v, &c.memory_bytes);
    if (!parsed || c.memory_bytes < (1u << 20) || c.memory_bytes > kMaxMemoryBytes) {
      bool too_large = parsed && c.memory_bytes > kMaxMemoryBytes;
      *error = std::string("AGORA_MEMORY=") + v + " is not a size between 1M and 40T" +
               (too_large ? " (the range is mapped twice, and a 128 TiB address space holds two "
                            "40 TiB ranges beside the program, its heap and libraries)"
                          : "; write e.g. 512M, 4G, 1T");
      return false;
    }
  }
  if (const char *v = env("AGORA_STACK")) {
    // Program mode's stacks in global memory (main's and every agora
    // thread's), each from its rank's share of AGORA_MEMORY.
    bool parsed = parse_size(v, &c.stack_bytes);
    if (!parsed || c.stack_bytes < (64u << 10) || c.stack_bytes > (1ull << 40)) {
      *error = std::string("AGORA_STACK=") + v +
               " is not a size between 64K and 1T; write e.g. 8M, 64M";
      return false;
    }
  }
  if (const char *v = env("AGORA_STATS")) {
    if (!parse_bool("AGORA_STATS", v, &c.print_stats, error)) return false;
  }
  if (const char *v = env("AGORA_STATS_JSON")) c.stats_json_path = v;
  if (const char *v = env("AGORA_SERVICE")) {
    if (!parse_choice<ServiceMode>("AGORA_SERVICE", v,
                                   {{"adaptive", ServiceMode::Adaptive}, {"poll", ServiceMode::Poll}},
                                   "a service mode", &c.service, error))
      return false;
  }
  if (const char *v = env("AGORA_SERVICE_SLEEP_US")) {
    if (!parse_count("AGORA_SERVICE_SLEEP_US", v, 1, 1000000, "microseconds", &c.service_sleep_us, error))
      return false;
  }
  if (const char *v = env("AGORA_WAIT")) {
    if (!parse_choice<WaitMode>("AGORA_WAIT", v,
                                {{"auto", WaitMode::Auto}, {"spin", WaitMode::Spin}, {"block", WaitMode::Block}},
                                "a wait mode", &c.wait, error))
      return false;
  }
  if (const char *v = env("AGORA_HEAP")) {
    if (!parse_choice<HeapPlacement>("AGORA_HEAP", v,
                                     {{"local", HeapPlacement::Local}, {"block", HeapPlacement::Block},
                                      {"cyclic", HeapPlacement::Cyclic}},
                                     "a heap placement", &c.heap, error))
      return false;
  }
  if (const char *v = env("AGORA_INTERVALS")) {
    if (!parse_choice<IntervalPolicy>("AGORA_INTERVALS", v,
                                      {{"lazy", IntervalPolicy::Lazy}, {"aggressive", IntervalPolicy::Aggressive}},
                                      "an interval policy", &c.intervals, error))
      return false;
  }
  if (const char *v = env("AGORA_THREADS_PER_RANK")) {
    if (!parse_count("AGORA_THREADS_PER_RANK", v, 1, 65536, "threads", &c.threads_per_rank, error))
      return false;
  }
  if (const char *v = env("AGORA_HANG_WARN")) {
    if (!parse_count("AGORA_HANG_WARN", v, 1, 86400 * 365, "seconds", &c.hang_warn_s, error)) return false;
  }
  if (const char *v = env("AGORA_HANG_TIMEOUT")) {
    if (!parse_count("AGORA_HANG_TIMEOUT", v, 0, 86400 * 365, "seconds", &c.hang_timeout_s, error))
      return false;
  }
  if (const char *v = env("AGORA_DOORBELL_SIGNAL")) {
    std::string ignored;
    if (!parse_count("AGORA_DOORBELL_SIGNAL", v, 1, 64, "", &c.doorbell_signal, &ignored)) {
      *error = std::string("AGORA_DOORBELL_SIGNAL=") + v +
               " is not a signal number; give a real-time signal's number (SIGRTMIN..SIGRTMAX, "
               "e.g. 40), or leave it unset for the first free one from SIGRTMIN+5";
      return false;
    }
  }
  if (const char *v = env("AGORA_TRACE")) c.trace_dir = v;
  if (const char *v = env("AGORA_TRACE_EVENTS")) {
    // 64 bytes an event: 2^26 events is 4 GiB of buffer per rank.
    uint32_t events = 0;
    if (!parse_count("AGORA_TRACE_EVENTS", v, 1, 1l << 26, "events", &events, error)) return false;
    c.trace_events = events;
  }
  if (const char *v = env("AGORA_PROFILE")) {
    if (!parse_bool("AGORA_PROFILE", v, &c.profile, error)) return false;
  }
  if (const char *v = env("AGORA_DEBUG")) {
    if (!parse_bool("AGORA_DEBUG", v, &c.debug, error)) return false;
  }
  *out = c;
  return true;
}

}  // namespace agora
