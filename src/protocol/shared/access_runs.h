// Protection changes collected while a batch of pages changes state (a
// barrier's or a lock grant's notices, a run of copies installed), applied
// as one change per run of consecutive pages with the same access, and only
// then the waiters of installed pages woken, so that none of them retries
// its access before its page is open. One mprotect per page split the
// application view's mapping page by page: nbody under hlrc spent ~540 us
// of every barrier invalidating 256 pages one at a time.
#pragma once
#include <vector>

#include "protocol/engine.h"

namespace agora {

class AccessRuns {
 public:
  void add(PageId page, Access access) { changes_.push_back({page, access}); }
  // Waiters to complete (with their status) once the changes are applied.
  void wake_after(std::vector<Waiter *> *waiters, int status);
  // Applies every change, then wakes; the batch is empty afterwards. The
  // last change of a page wins.
  void apply(EngineHost &host);
  ~AccessRuns();  // a batch is always applied: a forgotten one would leave pages shut

 private:
  struct Change {
    PageId page;
    Access access;
  };
  std::vector<Change> changes_;
  std::vector<std::pair<Waiter *, int>> wakes_;
};

}  // namespace agora
