// One-sided reads' metadata (docs/service.md): each rank exposes two
// windows (transport/mpi/mpi_one_sided.h): the service view of the range
// (the frames), and its metadata: kHomeMetaBytes the engine keeps current,
// one summary byte per kPagesPerSummary pages, then one flag byte per page
// that readers set to 1 ("a copy of this page left without the home's
// knowledge"); the home reports such pages once (collect_newly_shared) and
// sets them to 2. A reader also sets the summary byte of the page's 4096,
// which stays set: the home reads flags only where a copy ever left, not 1
// byte per page of everything allocated (a 1 TiB allocation has 256 Mi
// pages; its summaries are 64 KiB).
#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "protocol/engine.h"  // kHomeMetaBytes
#include "runtime/one_sided/one_sided_reads.h"

namespace agora {

namespace {
constexpr uint8_t kFlagMarked = 1, kFlagReported = 2;
}  // namespace

size_t OneSidedReads::flags_offset() const { return kHomeMetaBytes + summary_area(windowed_pages_); }

void OneSidedReads::alloc_meta(FetchMode fetch) {
  fetch_ = fetch;
  // No metadata is no error: reads take messages.
  if (host_.nranks() < 2) return;
  PageId pages = host_.range_pages();
  std::string why = fetch == FetchMode::Messages ? "AGORA_FETCH=messages" : "";
  if (why.empty()) {
    // Flags rounded up to whole words: the scan reads whole words.
    meta_bytes_ = kHomeMetaBytes + summary_area(pages) + ((pages + 7) & ~PageId(7));
    meta_ = host_.meta_alloc(meta_bytes_, &why);
  }
  // Every rank decides alike (the windows are collective): one-sided reads
  // only if every rank wants them and has its metadata.
  if (!host_.every_rank(meta_ != nullptr)) {
    log_debug("one-sided reads: off (%s)", why.empty() ? "another rank cannot have them" : why.c_str());
    host_.meta_free(meta_, meta_bytes_);
    meta_ = nullptr;
    return;
  }
  windowed_pages_ = pages;
}

void OneSidedReads::open() {
  decided_ = true;
  if (!meta_) return;
  std::string error;
  // The frames: the range's service view as mapped now (program mode has
  // grown and maybe moved it already; its window pages stay two-sided).
  if (!host_.open_windows(meta_, meta_bytes_, &error)) {
    log_debug("one-sided reads: off, %s", error.c_str());
    return;
  }
  log_debug("one-sided reads: on (MPI windows over %s of frames)",
            human_bytes(host_.range_pages() * host_.page_size()).c_str());
}

void OneSidedReads::close() {
  host_.close_windows();
  host_.meta_free(meta_, meta_bytes_);
  meta_ = nullptr;
}

std::byte *OneSidedReads::home_meta() const {
  // The metadata exists before the windows open (an engine built before
  // them may ask); once they could not open, there is none to keep.
  return host_.windows_open() || !decided_ ? meta_ : nullptr;
}

void OneSidedReads::placed_opened(const CollectiveRun &run) {
  if (meta_) placed_flags_end_ = std::max(placed_flags_end_, std::min(run.first + run.count, windowed_pages_));
}

void OneSidedReads::placed_closed(PageId first, PageId count) {
  // A later allocation of these pages starts unshared.
  if (meta_ && first < windowed_pages_)
    std::memset(meta_ + flags_offset() + first, 0, std::min(count, windowed_pages_ - first));
}

void OneSidedReads::collect_newly_shared(std::vector<PageId> *pages) {
  if (!host_.windows_open()) return;
  host_.sync_meta();  // readers' marks, visible to the loads below
  uint8_t *summaries = (uint8_t *)meta_ + kHomeMetaBytes;
  uint8_t *flags = (uint8_t *)meta_ + flags_offset();
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
  const AddressSpace &space = host_.space();
  scan(0, std::min<PageId>(space.collective_pages_used(), windowed_pages_));
  scan(space.placed_first_page(), placed_flags_end_);
  host_.sync_meta();  // the 2s, before readers look again
}

}  // namespace agora
