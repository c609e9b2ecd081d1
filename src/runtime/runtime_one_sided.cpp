// The runtime's side of one-sided reads (OneSidedReads,
// one_sided/one_sided_reads.h): the EngineHost calls (read_remote,
// home_meta, collect_newly_shared), and the OneSidedHost it reaches the rank
// through. The windows are the transport's (MpiOneSided, owned here); the
// metadata's memory is the platform's; a read lands in the cache's frame
// pool (CopyCache) and is delivered to the engine.
#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"
#include "transport/mpi/mpi_one_sided.h"

namespace agora {

class Runtime::OneSidedSide final : public OneSidedHost {
 public:
  explicit OneSidedSide(Runtime &rt) : rt_(rt) {}
  Rank rank() const override { return rt_.rank(); }
  Rank nranks() const override { return rt_.nranks(); }
  size_t page_size() const override { return rt_.page_size(); }
  const AddressSpace &space() const override { return *rt_.space_; }
  PageId range_pages() const override { return rt_.range_.size / rt_.page_size(); }
  bool same_node(Rank rank) const override { return rt_.transport_.same_node(rank); }
  Stats &stats() override { return rt_.stats_; }

  std::byte *meta_alloc(size_t bytes, std::string *why) override { return platform::lazy_zero_alloc(bytes, why); }
  void meta_free(std::byte *meta, size_t bytes) override { platform::lazy_zero_free(meta, bytes); }
  bool every_rank(bool ok) override { return rt_.transport_.allreduce_max(ok ? 0 : 1) == 0; }
  bool open_windows(std::byte *meta, size_t meta_bytes, std::string *error) override {
    return windows_.open(rt_.range_.service_view, rt_.range_.size, meta, meta_bytes, error);
  }
  bool windows_open() const override { return windows_.is_open(); }
  void close_windows() override { windows_.close(); }
  bool read(Rank home, const Marks &marks, std::byte *meta, uint32_t meta_bytes, size_t offset, std::byte *into,
            size_t bytes, std::string *error) override {
    ObservedRemoteRead observed(home, offset / page_size(), (uint32_t)(bytes / page_size()), bytes);
    // A home that no signal reaches is on another host, where MPI may emulate
    // RMA with messages its target progresses only in its own MPI calls (Open
    // MPI 4.1 over TCP): wake its service thread to make them, as for a request.
    if (!rt_.doorbells_.by_signal(home)) rt_.doorbells_.ring_to_act(home, rt_.config_.service);
    MpiOneSided::Marks m{marks.flag_offset, marks.flag_count, marks.summary_offset, marks.summary_count};
    return windows_.read_marked(home, m, meta, meta_bytes, offset, into, bytes, error);
  }
  void sync_meta() override { windows_.sync_meta(); }
  void read_queued() override {
    // With AGORA_WAIT=block the faulting thread sleeps until the service
    // thread completes its wait: wake it to deliver this.
    const Rank me = rank();
    if (rt_.block_waits_ && rt_.doorbells_.by_signal(me)) rt_.doorbells_.ring(me);
  }

  uint32_t reserve_landing(uint32_t count) override { return rt_.cache_.reserve_landing(count); }
  std::byte *landing_frames(uint32_t slot) override { return rt_.cache_.slot_frames(slot); }
  void unreserve_landing(uint32_t slot, uint32_t count) override { rt_.cache_.unreserve_landing(slot, count); }

  void deliver(Rank home, PageId first, uint32_t count, Payload meta, Payload pages, uint32_t landing) override {
    if (landing != FrameSlots::kNone) rt_.cache_.land(first, count, landing);  // replacing_frame adopts its slots
    rt_.engine_->on_remote_read(home, first, count, meta, pages);
    rt_.cache_.end_landing();  // the slots of pages not installed from there
    rt_.cache_.trim();         // copies came in: keep within AGORA_CACHE
  }

 private:
  Runtime &rt_;
  MpiOneSided windows_;
};

std::unique_ptr<OneSidedHost> Runtime::make_one_sided_host(Runtime &rt) { return std::make_unique<OneSidedSide>(rt); }

std::byte *Runtime::home_meta() { return one_sided_.home_meta(); }

bool Runtime::read_remote(Rank home, PageId first, uint32_t count, uint32_t meta_bytes) {
  return one_sided_.read(home, first, count, meta_bytes);
}

void Runtime::collect_newly_shared(std::vector<PageId> *pages) { one_sided_.collect_newly_shared(pages); }

}  // namespace agora
