// One-sided reads: the decision and the read (docs/service.md). A reader
// marks and reads the home's metadata, then reads the pages, the first step
// complete before the second: the home sees the marks before the data was
// read, and the data is no older than the metadata. Only pages this rank
// knows to be allocated are read one-sided; another rank's agora_malloc
// heap is known only to its home, whose reply to a message says when
// memory was freed.
#include "runtime/one_sided/one_sided_reads.h"

#include "common/log.h"
#include "memory/frame_slots.h"
#include "protocol/engine.h"  // kHomeMetaBytes

namespace agora {

namespace {
// Page buffers kept for reuse (spare_buffers_): a barrier's refresh has a
// few reads in flight at once; more are freed.
constexpr size_t kSpareReadBuffers = 8;
}  // namespace

static_assert(OneSidedReads::kMaxPages <= OneSidedReads::kPagesPerSummary);

bool OneSidedReads::known_allocated_at(Rank home, PageId first, PageId count) const {
  const AddressSpace &space = host_.space();
  PageId end = first + count;
  if (first < space.collective_capacity_pages()) {
    if (end > space.collective_pages_used()) return false;
  } else if (space.in_placed_region(first)) {
    CollectiveRun run;
    if (!space.placed_find(first, &run) || end > run.first + run.count) return false;
  } else {
    return false;  // another rank's agora_malloc heap: only its home knows
  }
  for (PageId p = first; p < end; ++p)  // count is small (kMaxPages)
    if (space.home_of(p) != home) return false;
  return true;
}

bool OneSidedReads::may_read(Rank home, PageId first, uint32_t count, uint32_t meta_bytes) const {
  if (!host_.windows_open() || home == host_.rank() || home < 0 || home >= host_.nranks()) return false;
  if (count == 0 || count > kMaxPages || meta_bytes > kHomeMetaBytes) return false;
  if (first >= windowed_pages_ || count > windowed_pages_ - first) return false;
  // Across hosts, MPI without RDMA emulates RMA with messages the target
  // must progress (Open MPI 4.1 over TCP: a one-sided read cost a jacobi
  // fault 3-4x the message path on 2 emulated hosts): auto asks the home.
  if (fetch_ == FetchMode::Auto && !host_.same_node(home)) return false;
  return known_allocated_at(home, first, count);
}

OneSidedHost::Marks OneSidedReads::marks(PageId first, uint32_t count) const {
  const PageId first_summary = first / kPagesPerSummary, last_summary = (first + count - 1) / kPagesPerSummary;
  return {flags_offset() + first, count, kHomeMetaBytes + first_summary, last_summary - first_summary + 1};
}

bool OneSidedReads::read(Rank home, PageId first, uint32_t count, uint32_t meta_bytes) {
  if (!may_read(home, first, count, meta_bytes)) return false;
  RemoteRead r{home, first, count, std::vector<std::byte>(meta_bytes), {}, FrameSlots::kNone};
  const size_t bytes = count * host_.page_size();
  // The pages land in free slots of the cache's frame pool where a run of
  // them is free: a copy installed from there keeps its slot instead of
  // being copied (cache/copy_cache_frames.cpp). Else into a buffer.
  r.landing = host_.reserve_landing(count);
  std::byte *into;
  if (r.landing != FrameSlots::kNone) {
    into = host_.landing_frames(r.landing);
  } else {
    if (!spare_buffers_.empty()) {
      r.pages = std::move(spare_buffers_.back());
      spare_buffers_.pop_back();
    }
    r.pages.resize(bytes);  // zeroes only what the buffer never held
    into = r.pages.data();
  }
  std::string error;
  if (!host_.read(home, marks(first, count), r.meta.data(), meta_bytes, first * host_.page_size(), into, bytes,
                  &error)) {
    // The marks may have landed: harmless (the home reports a page shared
    // that it may not be). The engine asks the home instead.
    if (r.landing != FrameSlots::kNone) host_.unreserve_landing(r.landing, count);
    if (!failed_) log_error("one-sided read from rank %d failed, using messages: %s", home, error.c_str());
    failed_ = true;
    return false;
  }
  Stats &stats = host_.stats();
  stats.one_sided_reads++;
  stats.one_sided_bytes += r.meta.size() + bytes;
  reads_.push_back(std::move(r));
  host_.read_queued();
  return true;
}

int OneSidedReads::deliver(int budget) {
  int delivered = 0;
  // The engine may start another read while it takes one: take from the front.
  while (delivered < budget && !reads_.empty()) {
    RemoteRead r = std::move(reads_.front());
    reads_.erase(reads_.begin());
    const bool landed = r.landing != FrameSlots::kNone;
    const Payload pages = landed ? Payload{host_.landing_frames(r.landing), r.count * host_.page_size()}
                                 : Payload{r.pages.data(), r.pages.size()};
    host_.deliver(r.home, r.first, r.count, {r.meta.data(), r.meta.size()}, pages, r.landing);
    // A few buffers of the largest read suffice: the reads in flight at once.
    if (!landed && spare_buffers_.size() < kSpareReadBuffers) spare_buffers_.push_back(std::move(r.pages));
    ++delivered;
  }
  return delivered;
}

}  // namespace agora
