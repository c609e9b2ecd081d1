// The EngineHost's page hooks: access in the application view, the service
// view's frames, whether a page is allocated; and opening a new allocation's
// home pages.
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"

namespace agora {

void Runtime::set_access(PageId page, Access access) { set_access_run(page, 1, access); }

void Runtime::set_access_run(PageId first, PageId count, Access access) {
  cache_.note(first, count, access);               // the bounded cache sees copies come and go (cache/copy_cache.cpp)
  if (cache_.defer(first, count, access)) return;  // applied in runs by its trim
  protect_run(first, count, access);
}

void Runtime::protect_run(PageId first, PageId count, Access access) {
  const bool pooled = cache_.pool_frames_held();
  for (PageId p = first; p < first + count;) {
    // Consecutive pages are consecutive addresses except across program
    // mode's windows of the executable: one change per stretch.
    const uintptr_t start = space_->addr_of(p);
    PageId n = 1;
    while (p + n < first + count && space_->addr_of(p + n) == start + n * page_size()) ++n;
    for (PageId q = p; q < p + n; ++q) observe_access(q, access);
    if (pooled)
      cache_.protect_pooled(p, n, access);  // copies in the frame pool are mapped in
    else
      protect_view((void *)start, n, access);
    p += n;
  }
}

void Runtime::protect_view(void *start, PageId pages, Access access) {
  if (!platform::vm_protect(start, pages * page_size(), access)) {
    const int err = errno;
    fatal("mprotect of %llu page(s) at %p to %s failed: %s%s", (unsigned long long)pages, start, access_name(access),
          system_error_text(err), err == ENOMEM ? map_limit_advice().c_str() : "");
  }
}

void Runtime::filling_frames(PageId first, PageId count) {
  // Discarded frames (an evicted copy) are allocated again by the copy in:
  // one call for the run instead of a kernel fault per page (docs/cache.md).
  // A page of the run the engine then drops (a stale reply, rare) keeps its
  // frame until it is fetched and evicted again or freed.
  // With the pool: consecutive slots for the run, which need nothing allocated.
  if (cache_.fill_from_pool(first, count)) return;
  if (count > 1) platform::vm_populate(frame(first), count * page_size(), true);
}

std::byte *Runtime::frame(PageId page) {
  if (std::byte *pooled = cache_.pooled_frame(page)) return pooled;  // a copy in the frame pool
  return range_.service_view + page * page_size();
}

void Runtime::replacing_frame(PageId page) { cache_.replacing_frame(page); }

bool Runtime::page_allocated(PageId page) const {
  // A memory server hears of no allocation: the compute ranks ask only for
  // pages they allocated (docs/memory-servers.md).
  if (servers_.is_server()) return true;
  if (space_->windows().contains_page(page)) return true;
  if (page < space_->collective_capacity_pages()) return page < space_->collective_pages_used();
  if (space_->in_placed_region(page)) {
    CollectiveRun run;
    return space_->placed_find(page, &run);
  }
  return arena_->page_live(page - space_->arena_first_page(rank()));
}

void Runtime::open_home_pages(const CollectiveRun &run, const char *what, uint64_t bytes) {
  if (space_->servers() > 0) return;  // memory servers home every page
  for_each_run_home_pages(run, rank(), compute_nranks(), [&](PageId first, PageId pages) {
    if (!platform::vm_protect((void *)space_->addr_of(first), pages * page_size(), engine_->home_access())) {
      const int err = errno;
      fatal("%s(%llu bytes): mprotect of its home pages failed: %s%s", what, (unsigned long long)bytes,
            system_error_text(err), err == ENOMEM ? map_limit_advice().c_str() : "");
    }
  });
}

}  // namespace agora
