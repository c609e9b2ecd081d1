// State of agora_malloc_placed (sync/memory_service.h): rank 0 sequences every
// placed allocation and free. It picks the pages, sends the run (or its end)
// to every rank, and answers the caller once every rank has acknowledged:
// so no rank can touch a new run before every rank knows its homes and the
// homes have opened their pages, and no page is reused before every rank
// has dropped it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "memory/collective_runs.h"
#include "memory/page_run_allocator.h"
#include "transport/message.h"

namespace agora {

// A caller's allocation or free on its way through rank 0.
struct PlacedRequest {
  Waiter w;
  uint64_t first = UINT64_MAX;  // the run's first page (allocation)
  uint64_t free_pages = 0;      // the placed region's free pages when one failed
};

// Rank 0 only.
struct PlacedSequencer {
  explicit PlacedSequencer(PageId first, PageId pages) : pages(first, pages) {}
  // A run being announced to (or withdrawn from) every rank.
  struct Broadcast {
    bool is_free = false;
    CollectiveRun run;
    Rank requester = 0;
    uint64_t token = 0;           // the requester's PlacedRequest
    Rank acks_left = 0;           // ranks still to acknowledge, rank 0 included
    std::vector<uint32_t> floor;  // freeing: merged from every rank's ack
  };
  PageRunAllocator pages;
  std::vector<uint32_t> floor;  // what reused pages' next homes start from (engine-defined)
  std::map<uint64_t, Broadcast> in_flight;
  uint64_t next_id = 1;
};

}  // namespace agora
