// The EngineHost's page hooks: access in the application view, the service
// view's frames, whether a page is allocated; and opening a new allocation's
// home pages.
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"

namespace agora {

void Runtime::set_access(PageId page, Access access) {
  observe_access(page, access);
  if (!platform::vm_protect((void *)space_->addr_of(page), page_size(), access))
    fatal("mprotect of page %p to %s failed: %s (too many distinct mappings? raise "
          "vm.max_map_count)",
          (void *)space_->addr_of(page), access_name(access), std::strerror(errno));
}

std::byte *Runtime::frame(PageId page) { return range_.service_view + page * page_size(); }

bool Runtime::page_allocated(PageId page) const {
  if (space_->windows().contains_page(page)) return true;
  if (page < space_->collective_capacity_pages()) return page < space_->collective_pages_used();
  if (space_->in_placed_region(page)) {
    CollectiveRun run;
    return space_->placed_find(page, &run);
  }
  return arena_->page_live(page - space_->arena_first_page(rank()));
}

void Runtime::open_home_pages(const CollectiveRun &run, const char *what, uint64_t bytes) {
  for_each_run_home_pages(run, rank(), nranks(), [&](PageId first, PageId pages) {
    if (!platform::vm_protect((void *)space_->addr_of(first), pages * page_size(), engine_->home_access()))
      fatal("%s(%llu bytes): mprotect of its home pages failed: %s (too many distinct mappings? "
            "raise vm.max_map_count, or use AGORA_PLACE_BLOCK)",
            what, (unsigned long long)bytes, std::strerror(errno));
  });
}

}  // namespace agora
