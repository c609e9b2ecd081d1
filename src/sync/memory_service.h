// The messages of global memory (Channel::Memory), as a state machine like
// the sync services: it never blocks and never calls MPI or the OS, so the
// simulator hosts it as the runtime does.
//
//  - Remote free: agora_free of a block in another rank's arena. The free is
//    a release to the owner: under hlrc this rank's writes to the block (a
//    header, the data) may still wait here as twins, and a diff arriving after
//    the owner handed the memory out again would overwrite the new block. So
//    they reach the home first, then the owner frees (and answers).
//  - Placed allocations (agora_malloc_placed) and their free: rank 0
//    sequences them (placed_sequencer.h). It picks or retires the pages, tells
//    every rank, and answers the caller once every rank has acknowledged. A
//    free is a release first, for the same reason as a remote free.
//
// Hosted by the runtime (its Channel::Memory; the callers' waits are noted
// for the hang watch there) and by the simulator (src/sim/sim_node.h). What
// touches this rank's memory is the host's (hooks): the arena, the record
// of placed runs and the protection of their pages. What the engine
// must do when a run starts or ends (forget stale page state, the floor later
// homes start from) happens here, around the hooks.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "common/status.h"
#include "memory/placed_sequencer.h"
#include "protocol/engine.h"
#include "transport/message.h"

namespace agora {

class MemoryService {
 public:
  // Statuses a placed operation may end with besides AGORA_OK: the region
  // has no room (allocation); the address lies inside a live run but does
  // not start it (kInsideRun: a private code, no public status), or no run
  // is there (free).
  static constexpr int kInsideRun = 1, kNoMemory = AGORA_ERR_NO_MEMORY, kBadPointer = AGORA_ERR_BAD_POINTER;

  struct Hooks {
    // Frees the block at `offset` of this rank's arena: 0, or a negative
    // status after saying why.
    std::function<int(uint64_t offset)> free_local;
    // Every rank: a placed run starts (record it, open this rank's home pages
    // in the application view) ...
    std::function<void(const CollectiveRun &run)> placed_opened;
    // ... or ends (drop its record, close and zero its pages).
    std::function<void(PageId first, PageId count)> placed_closed;
  };

  // placed_first, placed_pages: the placed region, which rank 0 sequences.
  MemoryService(ComponentHost &host, ProtocolEngine &engine, Hooks hooks, PageId placed_first, PageId placed_pages);

  // Frees the block at `offset` of `owner`'s arena (owner is another rank);
  // completes w with 0 or the owner's status.
  void free_remote(Rank owner, uint64_t offset, Waiter *w);
  // Allocates `pages` pages of the placed region; completes req->w with 0
  // (req->first set) or kNoMemory (req->free_pages set).
  void placed_alloc(uint64_t pages, Placement placement, Rank on_rank, PlacedRequest *req);
  // Frees the placed run starting at `first`; completes req->w with 0,
  // kInsideRun or kBadPointer.
  void placed_free(PageId first, PlacedRequest *req);
  void on_message(const MsgHeader &m, Payload p);

  // Rank 0: placed operations announced and not yet acknowledged by every rank.
  size_t placed_in_flight() const { return placed_ ? placed_->in_flight.size() : 0; }

 private:
  // Rank 0: the sequencer's side of a request from `requester`.
  void sequence_alloc(Rank requester, uint64_t token, uint64_t pages, Placement placement, Rank on_rank);
  void sequence_free(Rank requester, uint64_t token, PageId first);
  void acknowledged(uint64_t id, Payload floor);
  void reply(Rank requester, uint64_t token, int status, uint64_t first, uint64_t free_pages);
  // Every rank: a run starts (homes open their pages) or ends (every rank
  // drops, closes and zeroes it; *floor gets the engine's floor).
  void open(const CollectiveRun &run, const std::vector<uint32_t> &floor);
  void close(PageId first, PageId count, std::vector<uint32_t> *floor);

  ComponentHost &host_;
  ProtocolEngine &engine_;
  Hooks hooks_;
  std::optional<PlacedSequencer> placed_;  // rank 0
};

}  // namespace agora
