#include "memory/placed_runs.h"

#include <algorithm>
#include <new>

namespace agora {

PlacedRuns::PlacedRuns() : current_(new Snapshot()) {}

PlacedRuns::~PlacedRuns() {
  delete current_.load();
  for (Snapshot *s : retired_) delete s;
}

bool PlacedRuns::find(PageId page, CollectiveRun *out) const {
  // seq_cst on both sides: a writer that sees no reader after publishing
  // knows every later reader loads the new snapshot.
  readers_.fetch_add(1);
  const Snapshot &runs = *current_.load();
  auto after =
      std::upper_bound(runs.begin(), runs.end(), page, [](PageId p, const CollectiveRun &r) { return p < r.first; });
  bool found = after != runs.begin() && page - std::prev(after)->first < std::prev(after)->count;
  if (found) *out = *std::prev(after);
  readers_.fetch_sub(1);
  return found;
}

void PlacedRuns::publish(Snapshot *next) {
  retired_.push_back(current_.exchange(next));
  if (readers_.load() != 0) return;
  for (Snapshot *s : retired_) delete s;
  retired_.clear();
}

bool PlacedRuns::insert(const CollectiveRun &run) {
  const Snapshot &runs = *current_.load();
  auto at = std::upper_bound(runs.begin(), runs.end(), run.first,
                             [](PageId p, const CollectiveRun &r) { return p < r.first; });
  if (at != runs.begin() && run.first - std::prev(at)->first < std::prev(at)->count) return false;
  if (at != runs.end() && at->first - run.first < run.count) return false;
  auto *next = new (std::nothrow) Snapshot();
  if (!next) return false;
  try {
    next->reserve(runs.size() + 1);
    next->insert(next->end(), runs.begin(), at);
    next->push_back(run);
    next->insert(next->end(), at, runs.end());
  } catch (const std::bad_alloc &) {
    delete next;
    return false;
  }
  publish(next);
  return true;
}

bool PlacedRuns::remove(PageId first, CollectiveRun *removed) {
  const Snapshot &runs = *current_.load();
  auto at =
      std::lower_bound(runs.begin(), runs.end(), first, [](const CollectiveRun &r, PageId p) { return r.first < p; });
  if (at == runs.end() || at->first != first) return false;
  auto *next = new (std::nothrow) Snapshot();
  if (!next) return false;
  try {
    next->reserve(runs.size() - 1);
    next->insert(next->end(), runs.begin(), at);
    next->insert(next->end(), at + 1, runs.end());
  } catch (const std::bad_alloc &) {
    delete next;
    return false;
  }
  *removed = *at;
  publish(next);
  return true;
}

}  // namespace agora
