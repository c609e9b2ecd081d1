#include "common/config.h"

#include <unistd.h>  // environ
#include <algorithm>
#include <cstdlib>
#include <utility>

#include "common/options.h"

namespace agora {

namespace {
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
  for (const OptionSpec &spec : option_table()) {
    std::string known = spec.variable;
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
    if (name.rfind("AGORA_", 0) != 0 || option_find(name)) continue;
    std::string closest = config_closest_variable(name);
    messages.push_back("unknown variable " + name +
                       (closest.empty() ? " (no known variable is close; agorarun --help lists them)"
                                        : " (did you mean " + closest + "?)") +
                       "; it is ignored");
  }
  return messages;
}

bool config_from_env(Config *out, std::string *error, const std::vector<std::string> &known_protocols) {
  Config c;
  for (const OptionSpec &spec : option_table()) {
    const char *text = spec.assign ? option_env(spec) : nullptr;
    if (!text) continue;
    OptionValue value;
    if (!option_parse(spec, text, known_protocols, &value, error)) return false;
    spec.assign(&c, value);
  }
  *out = c;
  return true;
}

}  // namespace agora
