// Vocabulary shared by every layer.
#pragma once
#include <cstddef>
#include <cstdint>

namespace agora {

using PageId = uint64_t;  // index of a page within the global range
using Rank = int32_t;

// What the local copy of a page allows; ordered so that "at least" is >=.
enum class Access : uint8_t { None = 0, Read = 1, Write = 2 };

inline const char *access_name(Access a) { return a == Access::None ? "none" : a == Access::Read ? "read" : "write"; }

}  // namespace agora
