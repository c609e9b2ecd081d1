#include "common/status.h"

#include <cstdio>

namespace agora {

const char *status_text(int code) {
  // A switch over the public enum: -Wswitch names a public status missing
  // from AGORA_STATUS_LIST, and a status listed twice does not compile.
  switch (static_cast<agora_status_t>(code)) {
#define AGORA_STATUS_CASE(pub, text) \
  case pub:                          \
    return #pub ": " text;
    AGORA_STATUS_LIST(AGORA_STATUS_CASE)
#undef AGORA_STATUS_CASE
  }
  return nullptr;
}

}  // namespace agora

extern "C" const char *agora_strerror(int status) {
  if (const char *text = agora::status_text(status)) return text;
  // Per thread, so that concurrent callers each keep their own text.
  static thread_local char unknown[32];
  std::snprintf(unknown, sizeof unknown, "unknown status %d", status);
  return unknown;
}
