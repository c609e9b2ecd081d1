// What one-sided reads (OneSidedReads, one_sided_reads.h) need of the rank
// they run in: what it knows of global memory, the metadata's memory and
// the MPI windows (the transport's), the service's wake-ups, the cache's
// landing slots, and the engine to hand completed reads to. The runtime
// implements it in runtime_one_sided.cpp; OneSidedReads itself calls
// neither MPI nor the OS, so unit tests drive it with a fake host
// (tests/unit/one_sided_reads_test.cpp). Calls are made with the runtime's
// lock held, or during init and stop.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/stats.h"
#include "common/types.h"
#include "memory/address_space.h"
#include "transport/message.h"

namespace agora {

class OneSidedHost {
 public:
  virtual ~OneSidedHost() = default;

  // ---- the rank and the global memory it knows of ----
  virtual Rank rank() const = 0;
  virtual Rank nranks() const = 0;
  virtual size_t page_size() const = 0;
  virtual const AddressSpace &space() const = 0;
  // Pages [0, range_pages()) are the global range (the service view).
  virtual PageId range_pages() const = 0;
  virtual bool same_node(Rank rank) const = 0;
  virtual Stats &stats() = 0;

  // ---- the metadata's memory and the windows ----
  // Memory that reads as zero until written, or nullptr with *why.
  virtual std::byte *meta_alloc(size_t bytes, std::string *why) = 0;
  virtual void meta_free(std::byte *meta, size_t bytes) = 0;
  // Collective: true if every rank passes ok.
  virtual bool every_rank(bool ok) = 0;
  // Collective: the windows over the service view and `meta`; false with *error.
  virtual bool open_windows(std::byte *meta, size_t meta_bytes, std::string *error) = 0;
  virtual bool windows_open() const = 0;
  virtual void close_windows() = 0;  // collective
  // Where in the home's metadata a read leaves its marks (MpiOneSided::Marks).
  struct Marks {
    size_t flag_offset, flag_count, summary_offset, summary_count;
  };
  // Marks and reads `meta_bytes` of home's metadata, then `bytes` of its
  // frames from `offset` into `into` (MpiOneSided::read_marked; the home's
  // service thread is woken first where MPI may need it to progress the
  // read); false with *error.
  virtual bool read(Rank home, const Marks &marks, std::byte *meta, uint32_t meta_bytes, size_t offset, std::byte *into,
                    size_t bytes, std::string *error) = 0;
  // Readers' marks visible to this rank's loads, and its stores to readers.
  virtual void sync_meta() = 0;
  // A read was queued: wake whoever delivers it (a thread sleeping in a
  // wait, with AGORA_WAIT=block).
  virtual void read_queued() = 0;

  // ---- the cache's frame pool (CopyCache): where a read's pages can land ----
  virtual uint32_t reserve_landing(uint32_t count) = 0;  // FrameSlots::kNone: nowhere
  virtual std::byte *landing_frames(uint32_t slot) = 0;
  virtual void unreserve_landing(uint32_t slot, uint32_t count) = 0;

  // ---- the engine ----
  // A completed read, for the engine (landing: the pool slots its pages
  // are in, else kNone); the cache is kept within its bound after.
  virtual void deliver(Rank home, PageId first, uint32_t count, Payload meta, Payload pages, uint32_t landing) = 0;
};

}  // namespace agora
