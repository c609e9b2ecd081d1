// The runtime's side of the bounded cache of remote pages and its frame
// pool (CopyCache, cache/copy_cache.h): the CacheHost it reaches the rank
// through. The engine's eviction hooks are the engine's; protection goes
// through protect_run and protect_view (runtime_pages.cpp); the pool's
// memory and the range's frames are the platform's.
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "runtime/runtime.h"

namespace agora {

class Runtime::CacheSide final : public CacheHost {
 public:
  explicit CacheSide(Runtime &rt) : rt_(rt) {}
  Rank rank() const override { return rt_.rank(); }
  size_t page_size() const override { return rt_.page_size(); }
  Rank home_of(PageId page) const override { return rt_.home_of(page); }
  uintptr_t view_addr(PageId page) const override { return rt_.space_->addr_of(page); }
  Stats &stats() override { return rt_.stats_; }

  Access home_access() const override { return rt_.engine_->home_access(); }
  Access local_access(PageId page) const override { return rt_.engine_->local_access(page); }
  bool reclaim_home(PageId page) override { return rt_.engine_->reclaim_home(page); }
  ProtocolEngine::Eviction evict(PageId page) override { return rt_.engine_->evict(page); }
  void end_evictions() override { rt_.engine_->end_evictions(); }
  bool frame_in_use(PageId page) const override { return rt_.engine_->frame_in_use(page); }

  void protect_run(PageId first, PageId count, Access access) override { rt_.protect_run(first, count, access); }
  void protect_view(void *start, PageId pages, Access access) override { rt_.protect_view(start, pages, access); }
  void discard_frames(PageId first, PageId count) override {
    const size_t page = page_size();
    if (!platform::vm_discard(rt_.range_, first * page, count * page))
      fatal("cannot discard the frames of evicted pages %llu..+%llu: %s", (unsigned long long)first,
            (unsigned long long)count, system_error_text(errno));
  }
  void map_back(void *addr, PageId first, PageId count) override {
    const size_t bytes = count * page_size();
    std::string error;
    if (!platform::vm_map_back(rt_.range_, addr, bytes, first * page_size()) ||
        !rt_.home_writes_.register_again(addr, bytes, &error))
      fatal("cannot map global memory back over %zu evicted page(s) at %p: %s", (size_t)count, addr,
            error.empty() ? system_error_text(errno) : error.c_str());
  }
  bool pool_open(uint64_t slots, platform::FramePool *pool, std::string *error) override {
    return platform::frame_pool_open(slots, page_size(), pool, error) &&
           platform::vm_exclude_pool_from_fork(*pool, error);
  }
  void pool_close(platform::FramePool *pool) override { platform::frame_pool_close(pool); }
  void pool_map(const platform::FramePool &pool, void *addr, uint32_t slot, PageId count, Access access) override {
    if (!platform::frame_pool_map(pool, addr, slot, count, access)) {
      const int err = errno;
      fatal("mapping %llu cached page(s) at %p from the frame pool failed: %s%s", (unsigned long long)count, addr,
            system_error_text(err), err == ENOMEM ? rt_.map_limit_advice().c_str() : "");
    }
  }

 private:
  Runtime &rt_;
};

std::unique_ptr<CacheHost> Runtime::make_cache_host(Runtime &rt) { return std::make_unique<CacheSide>(rt); }

}  // namespace agora
