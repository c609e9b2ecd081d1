// One virtual node of the simulator: the host of a protocol engine and of
// every service the runtime hosts, one per channel (Runtime::dispatch), so
// that the same code runs here over a seeded network as on real ranks.
//
// What the runtime does with the OS, a node does in memory: its frames are a
// byte array, its application view an access per page (the simulated
// mprotect), its threads are the test's. A thread the ThreadService starts
// is recorded (started_threads()) for the test's scheduler to run; the hang
// watch is ticked with simulated seconds (SimCluster::tick_watches) and its
// state comes from the test (set_hang_state).
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/stats.h"
#include "memory/arena_allocator.h"
#include "memory/placed_runs.h"
#include "protocol/engine.h"
#include "sim/sim_options.h"
#include "sync/barrier_service.h"
#include "sync/condition_service.h"
#include "sync/hang_watch.h"
#include "sync/lock_service.h"
#include "sync/memory_service.h"
#include "sync/reduce_service.h"
#include "sync/semaphore_service.h"
#include "sync/thread_barrier_service.h"
#include "sync/thread_reduce_service.h"
#include "sync/thread_service.h"

namespace agora {

class SimCluster;

// A thread the node's ThreadService started: the test runs its body and
// calls threads().exited(id, ret) when it returns.
struct SimStartedThread {
  uint64_t id;
  std::vector<std::byte> fn;  // the reference its creator passed
  uint64_t arg;
};

class SimNode final : public EngineHost {
 public:
  SimNode(SimCluster &cluster, Rank rank);
  Rank rank() const override { return rank_; }
  Rank nranks() const override;
  void send(Rank dst, MsgHeader header, Payload payload = {}) override;
  void send_control(Rank dst, MsgHeader header, Payload payload = {}) override;
  Stats &stats() override { return stats_; }
  size_t page_size() const override;
  void set_access(PageId page, Access access) override;
  std::byte *frame(PageId page) override { return &frames_[page * page_size()]; }
  void replacing_frame(PageId page) override;
  Rank home_of(PageId page) const override;
  bool page_allocated(PageId page) const override;
  bool sole_application_thread() const override;
  // Write tracking and one-sided reads, when SimOptions asks for them.
  bool tracks_home_writes() const override { return options_.track_home_writes; }
  void track_home_writes(PageId first, PageId count) override;
  void collect_home_writes(std::vector<PageId> *written) override;
  std::byte *home_meta() override;
  bool read_remote(Rank home, PageId first, uint32_t count, uint32_t meta_bytes) override;
  void collect_newly_shared(std::vector<PageId> *pages) override;

  // An application thread stored to `page` through this node's view (the
  // testers call it for every store): write tracking records it, as the
  // kernel does for a write-protect-tracked page.
  void stored(PageId page);

  // What the application view of this node would allow (the simulated mprotect).
  Access access(PageId page) const;
  ProtocolEngine &engine() { return *engine_; }
  LockService &locks() { return locks_; }
  BarrierService &barrier() { return barrier_; }
  ReduceService &reduce() { return reduce_; }
  ThreadService &threads() { return *threads_; }
  ThreadBarrierService &thread_barriers() { return thread_barriers_; }
  SemaphoreService &semaphores() { return semaphores_; }
  ConditionService &conditions() { return conditions_; }
  ThreadReduceService &thread_reductions() { return thread_reductions_; }
  MemoryService &memory() { return *memory_; }
  HangWatch &watch() { return watch_; }
  // This node's agora_malloc heap (SimOptions::arena_pages): allocation is
  // local, as in the runtime; a free from another node goes through memory().
  ArenaAllocator &arena() { return *arena_; }

  // Threads started here and not yet taken by the test, oldest first.
  std::deque<SimStartedThread> &started_threads() { return started_; }
  // Thread barriers, semaphores and condition variables are named by an
  // address (here: a byte offset into the simulated space, which may lie
  // past its pages) and managed by the home of its page, as the runtime's
  // manager_of_key does.
  Rank manager_of(uint64_t object) const;
  // What this node tells the hang watch (blocked, waits); the message
  // counts are the node's own.
  void set_hang_state(std::function<RankState()> state) { hang_state_ = std::move(state); }
  void deliver(const MsgHeader &m, Payload p);
  // The bounded cache (SimOptions::cache_pages): evicts until within bound.
  void trim_cache();
  // Evicts one resident copy of a remote page chosen by `pick` (an index
  // below the number of pages); false if the page it lands on holds none.
  bool evict_random(uint64_t pick);
  const PageCache &cache() const { return cache_; }
  // As the runtime's frame pool between engine calls: the frames of copies
  // that became inaccessible and that the engine does not need are taken
  // (overwritten, SimOptions::frames_move).
  void take_unused_frames();

 private:
  // Asks the engine to evict `page`; discards the frame if it went.
  bool evict(PageId page);
  // The application view: an entry is unset until the engine or the memory
  // service changes it; an unset page is open as far as the protocol lets a
  // home (asked once) if it is live and homed here, else closed. This is
  // what the runtime does by opening home ranges when memory is allocated.
  static constexpr uint8_t kUnset = 0xff;
  void reset_view(PageId first, PageId count);
  Rank cyclic_home(PageId page) const;
  void placed_opened(const CollectiveRun &run);
  void placed_closed(PageId first, PageId count);
  int free_local(uint64_t offset);
  // A one-sided reader marked this home page shared.
  void mark_shared(PageId page);
  // Overwrites a frame as a move to another frame leaves it.
  void move_frame(PageId page);

  SimCluster &cluster_;
  const SimOptions &options_;
  Rank rank_;
  Stats stats_;
  uint64_t messages_in_ = 0;  // watch messages excluded, as the runtime counts
  std::vector<std::byte> frames_;
  std::vector<uint8_t> view_;
  std::vector<PageId> closed_copies_;  // remote pages set to no access since take_unused_frames
  uint8_t moves_ = 0;
  Access home_access_ = Access::None;
  std::unique_ptr<ProtocolEngine> engine_;
  // What the thread and memory services call, when a fault is injected there.
  std::unique_ptr<ProtocolEngine> faulty_engine_;
  LockService locks_;
  BarrierService barrier_;
  ReduceService reduce_;
  std::optional<ThreadService> threads_;
  ThreadBarrierService thread_barriers_;
  SemaphoreService semaphores_;
  ConditionService conditions_;
  ThreadReduceService thread_reductions_;
  std::optional<MemoryService> memory_;
  HangWatch watch_;
  std::function<RankState()> hang_state_;
  std::deque<SimStartedThread> started_;
  std::optional<ArenaAllocator> arena_;
  PlacedRuns placed_;
  // Write tracking: per page, tracked / written since last collected.
  std::vector<uint8_t> tracked_, written_;
  std::vector<PageId> written_list_;
  // One-sided reads: marks not yet collected, and the exposed metadata.
  std::vector<uint8_t> marked_;
  std::vector<PageId> marked_list_;
  std::vector<uint32_t> meta_;
  PageCache cache_;
};

}  // namespace agora
