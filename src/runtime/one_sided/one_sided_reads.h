// One-sided reads for the engine (EngineHost::read_remote, home_meta,
// collect_newly_shared; docs/service.md): a page homed on a computing rank
// is read with MPI RMA from its service view, without that rank's CPU
// (Wong & Rendell's fetch). This class owns the state: this rank's metadata
// (kHomeMetaBytes the engine keeps current, summary bytes, then a flag byte
// per page that readers mark), the reads completed and not yet delivered,
// and their buffers. It decides whether a read can go one-sided
// (may_read) and which metadata it marks (one_sided_reads.cpp), and scans
// the flags readers set (one_sided_flags.cpp). It reaches the rank through
// OneSidedHost (one_sided_host.h). Calls are made with the runtime's lock
// held, or during init and stop.
#pragma once
#include <string>
#include <vector>

#include "common/config.h"
#include "memory/collective_runs.h"
#include "runtime/one_sided/one_sided_host.h"

namespace agora {

class OneSidedReads {
 public:
  // Pages one read may cover: a bound on the bytes one MPI_Get moves while
  // the runtime's lock is held (64 pages: 256 KiB, ~15 us over shared memory).
  static constexpr uint32_t kMaxPages = 64;
  // Pages per summary byte: a read of kMaxPages spans at most two.
  static constexpr PageId kPagesPerSummary = 4096;

  explicit OneSidedReads(OneSidedHost &host) : host_(host) {}
  OneSidedReads(const OneSidedReads &) = delete;
  OneSidedReads &operator=(const OneSidedReads &) = delete;

  // ---- init and stop (one_sided_flags.cpp) ----
  // init: the metadata (collective; before the engine, which may ask for
  // home_meta), then the windows (collective; after program mode has grown
  // the service view). No metadata is no error: reads take messages.
  void alloc_meta(FetchMode fetch);
  void open();
  void close();  // stop: collective, before MPI_Finalize
  // This rank's metadata for the engine, or nullptr (no one-sided reads).
  std::byte *home_meta() const;

  // ---- reads (one_sided_reads.cpp) ----
  // Can [first, first+count) of `home` be read one-sided now: the windows
  // are open, the run is small enough and in them, the home on this node
  // where FetchMode::Auto asks it, and this rank knows every page to be
  // allocated and homed there?
  bool may_read(Rank home, PageId first, uint32_t count, uint32_t meta_bytes) const;
  // Can this rank tell, without asking `home`, that every page of [first,
  // first+count) is allocated and homed there? (Another rank's agora_malloc
  // heap is known only to its home.)
  bool known_allocated_at(Rank home, PageId first, PageId count) const;
  // Where a read of [first, first+count) marks the home's metadata.
  OneSidedHost::Marks marks(PageId first, uint32_t count) const;
  // EngineHost::read_remote: false if the read cannot go one-sided (or
  // failed: then it is said once); else it is queued for deliver.
  bool read(Rank home, PageId first, uint32_t count, uint32_t meta_bytes);
  // Hands up to `budget` completed reads to the engine (through the host).
  int deliver(int budget);
  size_t queued() const { return reads_.size(); }

  // ---- the flags readers set (one_sided_flags.cpp) ----
  // A placed run opened or closed: the flags scanned for newly shared pages.
  void placed_opened(const CollectiveRun &run);
  void placed_closed(PageId first, PageId count);
  // EngineHost::collect_newly_shared: pages readers marked since the last call.
  void collect_newly_shared(std::vector<PageId> *pages);

 private:
  // The metadata's layout: kHomeMetaBytes, the summaries (padded so that
  // the flags start aligned for the word-at-a-time scan), the flags.
  static PageId summary_bytes(PageId pages) { return (pages + kPagesPerSummary - 1) / kPagesPerSummary; }
  static PageId summary_area(PageId pages) { return (summary_bytes(pages) + 63) & ~PageId(63); }
  size_t flags_offset() const;

  OneSidedHost &host_;
  FetchMode fetch_ = FetchMode::Auto;
  std::byte *meta_ = nullptr;
  size_t meta_bytes_ = 0;
  PageId windowed_pages_ = 0;    // pages [0, windowed_pages_) are in the windows
  bool decided_ = false;         // the windows opened, or could not
  PageId placed_flags_end_ = 0;  // flags of the placed region are scanned up to here
  struct RemoteRead {
    Rank home;
    PageId first;
    uint32_t count;
    std::vector<std::byte> meta, pages;
    uint32_t landing;  // kNone, or the first of `count` reserved pool slots holding the pages
  };
  std::vector<RemoteRead> reads_;  // completed, for the engine
  // Page buffers of delivered reads, kept for the next ones: a fresh 256 KiB
  // buffer was zeroed and faulted in page by page at every read (nbody
  // under hlrc: ~150 us per 64-page refresh).
  std::vector<std::vector<std::byte>> spare_buffers_;
  bool failed_ = false;  // an MPI error was reported once
};

}  // namespace agora
