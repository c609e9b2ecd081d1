// Runs of consecutive pages in a sorted list: fn(first, count) for each,
// in order, so that a change to many pages (a protection, a discard, the
// start of write tracking) is one call per run rather than per page.
#pragma once
#include <vector>

#include "common/types.h"

namespace agora {

template <typename Fn>
void for_each_page_run(const std::vector<PageId> &sorted, Fn fn) {
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[j - 1] + 1) ++j;
    fn(sorted[i], (PageId)(j - i));
    i = j;
  }
}

}  // namespace agora
