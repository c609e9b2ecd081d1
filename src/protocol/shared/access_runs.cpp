#include "protocol/shared/access_runs.h"

#include <algorithm>

#include "common/log.h"

namespace agora {

void AccessRuns::wake_after(std::vector<Waiter *> *waiters, int status) {
  for (Waiter *w : *waiters) wakes_.push_back({w, status});
  waiters->clear();
}

void AccessRuns::apply(EngineHost &host) {
  // Stable: a page changed twice keeps its order, and the last change wins.
  std::stable_sort(changes_.begin(), changes_.end(), [](const Change &a, const Change &b) { return a.page < b.page; });
  size_t kept = 0;
  for (size_t i = 0; i < changes_.size(); ++i) {
    if (kept > 0 && changes_[kept - 1].page == changes_[i].page)
      changes_[kept - 1] = changes_[i];
    else
      changes_[kept++] = changes_[i];
  }
  changes_.resize(kept);
  for (size_t i = 0; i < changes_.size();) {
    size_t j = i + 1;
    while (j < changes_.size() && changes_[j].page == changes_[j - 1].page + 1 &&
           changes_[j].access == changes_[i].access)
      ++j;
    host.set_access_run(changes_[i].page, changes_[j - 1].page - changes_[i].page + 1, changes_[i].access);
    i = j;
  }
  changes_.clear();
  std::vector<std::pair<Waiter *, int>> wakes;
  wakes.swap(wakes_);
  for (auto &[w, status] : wakes) w->complete(status);
}

AccessRuns::~AccessRuns() {
  if (!changes_.empty() || !wakes_.empty()) fatal("internal error: a batch of page protection changes was not applied");
}

}  // namespace agora
