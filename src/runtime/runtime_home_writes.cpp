// The runtime's side of home write tracking (HomeWrites,
// home_writes/home_writes.h): the EngineHost calls and the HomeWritesHost it
// reaches the rank through; and, for an mprotect refused at the kernel's
// mapping limit, the advice that names what to do (map_limit_advice).
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/log.h"
#include "platform/platform.h"
#include "runtime/runtime.h"

namespace agora {

class Runtime::HomeWritesSide final : public HomeWritesHost {
 public:
  explicit HomeWritesSide(Runtime &rt) : rt_(rt) {}
  Rank rank() const override { return rt_.rank(); }
  size_t page_size() const override { return rt_.page_size(); }
  const platform::GlobalRange &range() const override { return rt_.range_; }
  const AddressSpace &space() const override { return *rt_.space_; }
  bool page_allocated(PageId page) const override { return rt_.page_allocated(page); }

 private:
  Runtime &rt_;
};

std::unique_ptr<HomeWritesHost> Runtime::make_home_writes_host(Runtime &rt) {
  return std::make_unique<HomeWritesSide>(rt);
}

void Runtime::track_home_writes(PageId first, PageId count) { home_writes_.track(first, count); }

void Runtime::collect_home_writes(std::vector<PageId> *written) { home_writes_.collect(written); }

std::string Runtime::map_limit_advice() const {
  // Each page whose protection differs from its neighbours' is a mapping of
  // its own. Copies of remote pages are bounded by the cache (cache/copy_cache.cpp)
  // and sc takes home pages back; what remains is home pages other ranks
  // read, write-protected so that the home's next write is seen.
  const uint64_t limit = platform::vm_map_limit(), in_use = platform::vm_map_count();
  const unsigned long long raise_to = limit ? 4 * limit : 262144;
  char text[700];
  int n = std::snprintf(text, sizeof text,
                        " (the process has %llu memory mappings; the kernel allows vm.max_map_count=%llu, and every "
                        "page protected apart from its neighbours is one. ",
                        (unsigned long long)in_use, (unsigned long long)limit);
  if (n < 0 || (size_t)n >= sizeof text) return text;
  if (home_writes_.available()) {
    std::snprintf(text + n, sizeof text - n, "Remedy: raise vm.max_map_count, e.g. sysctl -w vm.max_map_count=%llu)",
                  raise_to);
    return text;
  }
  const char *why = config_.home_writes == HomeWritesMode::Trap ? "AGORA_HOME_WRITES=trap"
                    : config_.profile                           ? "AGORA_PROFILE"
                                                                : "this kernel cannot track them";
  std::snprintf(text + n, sizeof text - n,
                "Home writes are trapped here (%s), so each home page another rank holds a copy of is "
                "write-protected: one mapping each when they alternate. Remedies: raise vm.max_map_count, e.g. "
                "sysctl -w vm.max_map_count=%llu; or AGORA_HOME_WRITES=auto on Linux >= 5.19, where the kernel "
                "tracks home writes and protects nothing for them; or AGORA_PLACE_BLOCK, which keeps shared home "
                "pages in runs)",
                why, raise_to);
  return text;
}

}  // namespace agora
