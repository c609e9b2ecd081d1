#include "common/log.h"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace agora {
namespace {
int g_rank = -1;
int g_forked_pid = 0;
bool g_debug = false;
void (*g_abort_hook)(int) = nullptr;

void vprint(const char *fmt, va_list ap) {
  char line[1024];
  int n = g_forked_pid  ? std::snprintf(line, sizeof line, "agora[pid %d, forked from rank %d]: ", g_forked_pid, g_rank)
          : g_rank >= 0 ? std::snprintf(line, sizeof line, "agora[rank %d]: ", g_rank)
                        : std::snprintf(line, sizeof line, "agora: ");
  n += std::vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
  if (n > (int)sizeof line - 2) n = sizeof line - 2;
  line[n++] = '\n';
  // One write() so lines from concurrent ranks do not interleave.
  ssize_t ignored = write(2, line, n);
  (void)ignored;
}
}  // namespace

const char *system_error_text(int err) {
  static thread_local char buf[128];
  return strerror_r(err, buf, sizeof buf);  // GNU: the text, in buf or static
}

void log_set_rank(int rank) { g_rank = rank; }
void log_set_forked_child(int pid) { g_forked_pid = pid; }
void log_set_debug(bool enabled) { g_debug = enabled; }
bool log_debug_enabled() { return g_debug; }
void log_set_abort_hook(void (*hook)(int)) { g_abort_hook = hook; }

void log_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(fmt, ap);
  va_end(ap);
}

void log_debug(const char *fmt, ...) {
  if (!g_debug) return;
  va_list ap;
  va_start(ap, fmt);
  vprint(fmt, ap);
  va_end(ap);
}

void fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(fmt, ap);
  va_end(ap);
  if (g_abort_hook) g_abort_hook(1);
  std::_Exit(1);
}

std::string human_bytes(uint64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace agora
