#include <unistd.h>

#include <climits>

#include "platform/platform.h"

namespace agora::platform {

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0 || !name[0]) return "unknown";
  return name;
}

}  // namespace agora::platform
