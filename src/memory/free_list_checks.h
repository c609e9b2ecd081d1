// Invariant checks of the first-fit allocators (ArenaAllocator,
// PageRunAllocator), whose state is two maps of runs, start -> length: the
// free runs and the live ones. Each check looks only at the runs next to
// one position (O(log runs)), so it stays on in debug builds at every
// allocation and free; the unit tests feed it corrupted maps.
#pragma once
#include <cstdint>
#include <iterator>
#include <map>
#include <utility>

namespace agora {

// Around position `at`: the runs of either map that start just before or
// after it are non-empty, inside [lo, hi), do not overlap one another, and
// two free runs never touch (they would have been coalesced).
template <typename Key, typename Length>
bool free_lists_consistent_near(const std::map<Key, Length> &free, const std::map<Key, Length> &live, Key at, Key lo,
                                Key hi) {
  struct Run {
    Key start;
    Length length;
    bool free;
  };
  Run runs[6];
  int n = 0;
  auto collect = [&](const std::map<Key, Length> &map, bool is_free) {
    auto it = map.upper_bound(at);
    if (it != map.begin()) --it;
    for (int k = 0; k < 3 && it != map.end(); ++k, ++it) runs[n++] = {it->first, it->second, is_free};
  };
  collect(free, true);
  collect(live, false);
  for (int i = 1; i < n; ++i)  // insertion sort of at most six runs
    for (int j = i; j > 0 && runs[j].start < runs[j - 1].start; --j) std::swap(runs[j], runs[j - 1]);
  for (int i = 0; i < n; ++i) {
    if (runs[i].length == 0 || runs[i].start < lo || runs[i].start > hi || runs[i].length > hi - runs[i].start)
      return false;
    if (i == 0) continue;
    const Run &prev = runs[i - 1];
    const Key end = prev.start + prev.length;
    if (end > runs[i].start) return false;                                // overlap
    if (prev.free && runs[i].free && end == runs[i].start) return false;  // not coalesced
  }
  return true;
}

// [first, first+count) lies in no run of `map`.
template <typename Key, typename Length>
bool range_outside_runs(const std::map<Key, Length> &map, Key first, Length count) {
  auto it = map.lower_bound(first + count);  // runs starting at or after the end are clear
  if (it == map.begin()) return true;
  --it;
  return it->first + it->second <= first;
}

}  // namespace agora
