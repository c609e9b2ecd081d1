// Where start-up and finalize spend their time, phase by phase, for
// AGORA_DEBUG=1 (docs/running.md): an empty program's cost is mostly
// fixed steps (MPI, windows, threads), and a step that grows shows here.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "platform/platform.h"

namespace agora {

class PhaseTimes {
 public:
  void begin() {
    marks_.clear();
    last_ = platform::now_seconds();
    first_ = last_;
  }
  // Ends the phase called `name` (what ran since the last mark).
  void mark(const char *name) {
    double now = platform::now_seconds();
    marks_.push_back({name, now - last_});
    last_ = now;
  }
  // "total 12.3 ms: MPI 10.1, windows 0.4, ..." (milliseconds).
  std::string text() const {
    char part[96];
    std::snprintf(part, sizeof part, "total %.1f ms:", (last_ - first_) * 1e3);
    std::string out = part;
    for (size_t i = 0; i < marks_.size(); ++i) {
      std::snprintf(part, sizeof part, "%s %s %.1f", i ? "," : "", marks_[i].name, marks_[i].seconds * 1e3);
      out += part;
    }
    return out;
  }

 private:
  struct Mark {
    const char *name;
    double seconds;
  };
  std::vector<Mark> marks_;
  double first_ = 0, last_ = 0;
};

}  // namespace agora
