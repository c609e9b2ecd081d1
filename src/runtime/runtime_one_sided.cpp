// One-sided reads for the engine (EngineHost::read_remote, home_meta,
// collect_newly_shared): a page homed on a computing rank is read with MPI
// RMA from its service view, without that rank's CPU (paper 004's fetch).
//
// Each rank exposes two windows (transport/mpi/mpi_one_sided.h): the
// service view of the range (the frames), and its metadata: kHomeMetaBytes
// the engine keeps current, one summary byte per kPagesPerSummary pages,
// then one flag byte per page that readers set to 1 ("a copy of this page
// left without the home's knowledge"); the home reports such pages once
// (collect_newly_shared) and sets them to 2. A reader also sets the summary
// byte of the page's 4096, which stays set: the home reads flags only
// where a copy ever left, not 1 byte per page of everything allocated (a
// 1 TiB allocation has 256 Mi pages; its summaries are 64 KiB). A reader
// marks and reads the metadata, then reads the pages, the first step
// complete before the second: the home sees the marks before the data was
// read, and the data is no older than the metadata.
//
// Only pages this rank knows to be allocated are read one-sided; another
// rank's agora_malloc heap is known only to its home, whose reply to a
// message says when memory was freed.
#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"

namespace agora {

namespace {
// Pages one read may cover: a bound on the bytes one MPI_Get moves while the
// runtime's lock is held (64 pages: 256 KiB, ~15 us over shared memory).
constexpr uint32_t kMaxRemoteReadPages = 64;
constexpr uint8_t kFlagMarked = 1, kFlagReported = 2;
// Page buffers kept for reuse (spare_read_buffers_): a barrier's refresh
// has a few reads in flight at once; more are freed.
constexpr size_t kSpareReadBuffers = 8;
// Pages per summary byte: a read of kMaxRemoteReadPages spans at most two.
constexpr PageId kPagesPerSummary = 4096;
static_assert(kMaxRemoteReadPages <= kPagesPerSummary);
PageId summary_bytes(PageId pages) { return (pages + kPagesPerSummary - 1) / kPagesPerSummary; }
// The summaries' share of the metadata, so that the flags start aligned
// for the word-at-a-time scan.
PageId summary_area(PageId pages) { return (summary_bytes(pages) + 63) & ~PageId(63); }
}  // namespace

void Runtime::alloc_one_sided_meta() {
  // No metadata is no error: reads take messages.
  if (nranks() < 2) return;
  PageId pages = range_.size / page_size();
  std::string why = config_.fetch == FetchMode::Messages ? "AGORA_FETCH=messages" : "";
  if (why.empty()) {
    // Flags rounded up to whole words: the scan reads whole words.
    meta_bytes_ = kHomeMetaBytes + summary_area(pages) + ((pages + 7) & ~PageId(7));
    meta_ = platform::lazy_zero_alloc(meta_bytes_, &why);
  }
  // Every rank decides alike (the windows are collective): one-sided reads
  // only if every rank wants them and has its metadata.
  if (transport_.allreduce_max(meta_ ? 0 : 1) != 0) {
    log_debug("one-sided reads: off (%s)", why.empty() ? "another rank cannot have them" : why.c_str());
    platform::lazy_zero_free(meta_, meta_bytes_);
    meta_ = nullptr;
    return;
  }
  windowed_pages_ = pages;
}

void Runtime::open_one_sided() {
  one_sided_decided_ = true;
  if (!meta_) return;
  std::string error;
  // The frames: the range's service view as mapped now (program mode has
  // grown and maybe moved it already; its window pages stay two-sided).
  if (!one_sided_.open(range_.service_view, range_.size, meta_, meta_bytes_, &error)) {
    log_debug("one-sided reads: off, %s", error.c_str());
    return;
  }
  log_debug("one-sided reads: on (MPI windows over %s of frames)", platform::human_bytes(range_.size).c_str());
}

void Runtime::close_one_sided() {
  one_sided_.close();
  platform::lazy_zero_free(meta_, meta_bytes_);
  meta_ = nullptr;
}

std::byte *Runtime::home_meta() {
  // The metadata exists before the windows open (an engine built before
  // them may ask); once they could not open, there is none to keep.
  return one_sided_.is_open() || !one_sided_decided_ ? meta_ : nullptr;
}

bool Runtime::known_allocated_at(Rank home, PageId first, PageId count) const {
  PageId end = first + count;
  if (first < space_->collective_capacity_pages()) {
    if (end > space_->collective_pages_used()) return false;
  } else if (space_->in_placed_region(first)) {
    CollectiveRun run;
    if (!space_->placed_find(first, &run) || end > run.first + run.count) return false;
  } else {
    return false;  // another rank's agora_malloc heap: only its home knows
  }
  for (PageId p = first; p < end; ++p)  // count is small (kMaxRemoteReadPages)
    if (home_of(p) != home) return false;
  return true;
}

bool Runtime::read_remote(Rank home, PageId first, uint32_t count, uint32_t meta_bytes) {
  if (!one_sided_.is_open() || home == rank() || home < 0 || home >= nranks()) return false;
  if (count == 0 || count > kMaxRemoteReadPages || meta_bytes > kHomeMetaBytes) return false;
  if (first >= windowed_pages_ || count > windowed_pages_ - first) return false;
  // Across hosts, MPI without RDMA emulates RMA with messages the target
  // must progress (Open MPI 4.1 over TCP: a one-sided read cost a jacobi
  // fault 3-4x the message path on 2 emulated hosts): auto asks the home.
  if (config_.fetch == FetchMode::Auto && !transport_.same_node(home)) return false;
  if (!known_allocated_at(home, first, count)) return false;
  RemoteRead r{home, first, count, std::vector<std::byte>(meta_bytes), {}};
  const size_t bytes = count * page_size();
  // The pages land in free slots of the cache's frame pool where a run of
  // them is free: a copy installed from there keeps its slot instead of
  // being copied (runtime_frame_pool.cpp). Else into a buffer.
  r.landing = cache_.reserve_landing(count);
  std::byte *into;
  if (r.landing != FrameSlots::kNone) {
    into = cache_.slot_frames(r.landing);
  } else {
    if (!spare_read_buffers_.empty()) {
      r.pages = std::move(spare_read_buffers_.back());
      spare_read_buffers_.pop_back();
    }
    r.pages.resize(bytes);  // zeroes only what the buffer never held
    into = r.pages.data();
  }
  std::string error;
  ObservedRemoteRead observed(home, first, count, bytes);
  // A home that no signal reaches is on another host, where MPI may emulate
  // RMA with messages its target progresses only in its own MPI calls (Open
  // MPI 4.1 over TCP): wake its service thread to make them, as for a request.
  if (doorbells_[home].pid == 0) ring_to_act(home);
  const size_t summaries = kHomeMetaBytes, flags = kHomeMetaBytes + summary_area(windowed_pages_);
  const PageId first_summary = first / kPagesPerSummary, last_summary = (first + count - 1) / kPagesPerSummary;
  MpiOneSided::Marks marks{flags + first, count, summaries + first_summary, last_summary - first_summary + 1};
  if (!one_sided_.read_marked(home, marks, r.meta.data(), meta_bytes, first * page_size(), into, bytes, &error)) {
    // The marks may have landed: harmless (the home reports a page shared
    // that it may not be). The engine asks the home instead.
    if (r.landing != FrameSlots::kNone) cache_.unreserve_landing(r.landing, count);
    if (!remote_read_failed_) log_error("one-sided read from rank %d failed, using messages: %s", home, error.c_str());
    remote_read_failed_ = true;
    return false;
  }
  stats_.one_sided_reads++;
  stats_.one_sided_bytes += r.meta.size() + bytes;
  remote_reads_.push_back(std::move(r));
  // With AGORA_WAIT=block the faulting thread sleeps until the service
  // thread completes its wait: wake it to deliver this.
  if (block_waits_ && rank() < (Rank)doorbells_.size() && doorbells_[rank()].pid) ring(doorbells_[rank()]);
  return true;
}

int Runtime::deliver_remote_reads(int budget) {
  int delivered = 0;
  // The engine may start another read while it takes one: take from the front.
  while (delivered < budget && !remote_reads_.empty()) {
    RemoteRead r = std::move(remote_reads_.front());
    remote_reads_.erase(remote_reads_.begin());
    const bool landed = r.landing != FrameSlots::kNone;
    const Payload pages = landed ? Payload{cache_.slot_frames(r.landing), r.count * page_size()}
                                 : Payload{r.pages.data(), r.pages.size()};
    if (landed) cache_.land(r.first, r.count, r.landing);  // replacing_frame adopts its slots
    engine_->on_remote_read(r.home, r.first, r.count, {r.meta.data(), r.meta.size()}, pages);
    cache_.end_landing();  // the slots of pages not installed from there
    cache_.trim();  // copies came in: keep within AGORA_CACHE
    // A few buffers of the largest read suffice: the reads in flight at once.
    if (!landed && spare_read_buffers_.size() < kSpareReadBuffers) spare_read_buffers_.push_back(std::move(r.pages));
    ++delivered;
  }
  return delivered;
}

void Runtime::one_sided_placed_opened(const CollectiveRun &run) {
  if (meta_) placed_flags_end_ = std::max(placed_flags_end_, std::min(run.first + run.count, windowed_pages_));
}

void Runtime::one_sided_placed_closed(PageId first, PageId count) {
  // A later allocation of these pages starts unshared.
  if (meta_ && first < windowed_pages_)
    std::memset(meta_ + kHomeMetaBytes + summary_area(windowed_pages_) + first, 0,
                std::min(count, windowed_pages_ - first));
}

void Runtime::collect_newly_shared(std::vector<PageId> *pages) {
  if (!one_sided_.is_open()) return;
  one_sided_.sync_meta();  // readers' marks, visible to the loads below
  uint8_t *summaries = (uint8_t *)meta_ + kHomeMetaBytes;
  uint8_t *flags = summaries + summary_area(windowed_pages_);
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  // Only collective and placed pages are ever marked (another rank's heap is
  // never read one-sided): look at the flags under the summaries set among
  // those in use, a word at a time. A reader marking again writes 1 again:
  // reported again, harmlessly.
  auto scan = [&](PageId lo, PageId hi) {
    for (PageId chunk = lo / kPagesPerSummary; chunk < summary_bytes(hi); ++chunk) {
      if (!__atomic_load_n(summaries + chunk, __ATOMIC_RELAXED)) continue;
      PageId from = std::max(lo, chunk * kPagesPerSummary), to = std::min(hi, (chunk + 1) * kPagesPerSummary);
      for (PageId w = from & ~PageId(7); w < to; w += 8) {
        uint64_t x = __atomic_load_n((uint64_t *)(flags + w), __ATOMIC_RELAXED) ^ kOnes;  // 1s are now 0s
        if (((x - kOnes) & ~x & kHighs) == 0) continue;
        for (PageId p = std::max(w, from); p < std::min(w + 8, to); ++p) {
          uint8_t expected = kFlagMarked;
          if (__atomic_compare_exchange_n(flags + p, &expected, kFlagReported, false, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED))
            pages->push_back(p);
        }
      }
    }
  };
  scan(0, std::min<PageId>(space_->collective_pages_used(), windowed_pages_));
  scan(space_->placed_first_page(), placed_flags_end_);
  one_sided_.sync_meta();  // the 2s, before readers look again
}

}  // namespace agora
