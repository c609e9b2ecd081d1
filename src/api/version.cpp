// agora_version(): the library's version, which must be the one the headers
// and the build (CMake's project version, passed as AGORA_PROJECT_VERSION)
// state; a mismatch stops the build here rather than misleading users.
#include <string_view>

#include "agora/agora.h"

#ifndef AGORA_PROJECT_VERSION
#error "AGORA_PROJECT_VERSION is set by CMake (project(agora VERSION ...))"
#endif

static_assert(std::string_view(AGORA_VERSION_STRING) == AGORA_PROJECT_VERSION,
              "include/agora/agora.h's AGORA_VERSION_STRING differs from project(agora VERSION) in CMakeLists.txt");
static_assert(AGORA_VERSION_MAJOR == AGORA_PROJECT_VERSION_MAJOR &&
                  AGORA_VERSION_MINOR == AGORA_PROJECT_VERSION_MINOR &&
                  AGORA_VERSION_PATCH == AGORA_PROJECT_VERSION_PATCH,
              "AGORA_VERSION_MAJOR/MINOR/PATCH in agora.h differ from the CMake project version");

extern "C" const char *agora_version(void) { return AGORA_VERSION_STRING; }
