// A virtual thread's load or store of one 8-byte word of the simulated
// memory, as the runtime's fault path does it: if the node's application
// view does not allow the access, the engine is asked (the thread then waits
// on its Waiter and retries the same access once it is done).
#pragma once
#include <cstdint>
#include <cstring>

#include "sim/sim_cluster.h"

namespace agora::simtest {

// True if the word was read into *out; false if a fault was started on w.
inline bool sim_load(SimNode &node, uint64_t word, Waiter &w, uint64_t *out) {
  uint64_t per_page = node.page_size() / 8;
  PageId page = word / per_page;
  if (node.access(page) < Access::Read) {
    w.reset();
    w.status = 0;
    node.engine().on_fault(page, Access::Read, &w);
    return false;
  }
  std::memcpy(out, node.frame(page) + (word % per_page) * 8, 8);
  return true;
}

// True if the word was written; false if a fault was started on w.
inline bool sim_store(SimNode &node, uint64_t word, uint64_t value, Waiter &w) {
  uint64_t per_page = node.page_size() / 8;
  PageId page = word / per_page;
  if (node.access(page) < Access::Write) {
    w.reset();
    w.status = 0;
    node.engine().on_fault(page, Access::Write, &w);
    return false;
  }
  std::memcpy(node.frame(page) + (word % per_page) * 8, &value, 8);
  node.stored(page);
  return true;
}

}  // namespace agora::simtest
