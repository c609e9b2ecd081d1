// Home write tracking for the engine (EngineHost::tracks_home_writes,
// track_home_writes, collect_home_writes; docs/cache.md): the kernel
// records this rank's writes to its home pages in the application view
// (platform/write_tracker_linux.h), so an engine can leave them writable
// instead of trapping the first write of each. This class owns the tracker
// and the runs of pages tracked; it reaches the rank through
// HomeWritesHost. Calls are made with the runtime's lock held (open and
// close: during init and stop).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/types.h"
#include "memory/address_space.h"
#include "platform/platform.h"
#include "platform/write_tracker_linux.h"

namespace agora {

class HomeWritesHost {
 public:
  virtual ~HomeWritesHost() = default;
  virtual Rank rank() const = 0;
  virtual size_t page_size() const = 0;
  // The global range (the application view) and the pages' places in it.
  virtual const platform::GlobalRange &range() const = 0;
  virtual const AddressSpace &space() const = 0;
  // Is the page allocated (EngineHost::page_allocated)?
  virtual bool page_allocated(PageId page) const = 0;
};

class HomeWrites {
 public:
  explicit HomeWrites(HomeWritesHost &host) : host_(host) {}
  HomeWrites(const HomeWrites &) = delete;
  HomeWrites &operator=(const HomeWrites &) = delete;

  // init, before the engine: AGORA_HOME_WRITES=auto (or sync) opens the
  // kernel's tracker over the whole application view.
  void open(const Config &config);
  void close() { tracker_.close(); }
  bool available() const { return tracker_.available(); }
  // EngineHost's: arm pages [first, first+count) (this rank's home pages),
  // and the pages written since they were armed or last collected.
  void track(PageId first, PageId count);
  void collect(std::vector<PageId> *written);
  // Freed pages are no longer tracked.
  void untrack(PageId first, PageId count);
  // Pages mapped back over the view (the cache's frame pool) are tracked
  // again where they were (WriteTracker::register_again).
  bool register_again(void *addr, size_t len, std::string *error) { return tracker_.register_again(addr, len, error); }

 private:
  // The application-view address runs of pages [first, first+count).
  void for_each_view_run(PageId first, PageId count, const std::function<void(std::byte *, size_t)> &fn) const;

  HomeWritesHost &host_;
  // Open only with AGORA_HOME_WRITES=auto (or sync) where the kernel can.
  platform::WriteTracker tracker_;
  std::map<PageId, PageId> tracked_runs_;  // first page -> count, coalesced
};

}  // namespace agora
