// One rank's runtime: owns the global range, the transport, the protocol
// engine and the sync services, and is their EngineHost. It is a core --
// the lock (`lock_`), the transport, dispatch, waiting and the service --
// plus subsystems that each own their state and reach the core only through
// a narrow host interface, implemented by a small adapter class nested in
// Runtime (docs/internals.md, "Subsystems and the lock"):
//   cache_        CopyCache: the bounded cache of remote pages and its frame
//                 pool (cache/, CacheHost; adapter runtime_cache.cpp)
//   one_sided_    OneSidedReads: one-sided reads, their metadata and queue
//                 (one_sided/, OneSidedHost; runtime_one_sided.cpp)
//   doorbells_    Doorbells: ringing other ranks' service threads
//                 (doorbells/, DoorbellsHost; runtime_doorbells.cpp)
//   home_writes_  HomeWrites: the kernel's home write tracking
//                 (home_writes/, HomeWritesHost; runtime_home_writes.cpp)
//   gptr_         GlobalPointers: the global-pointer engine, its segment and
//                 its own lock (global_pointers/, GlobalPointersHost; runtime_gptr.cpp)
//   servers_      MemoryServers: compute ranks vs memory servers, this
//                 rank's role (memory_servers/, ComponentHost)
//   lock_ids_     LockIds: lock ids and creation signatures (locks/; needs no host)
// All of their state but gptr_'s is guarded by `lock_` (every call into
// them is made with it held, or during init and stop); gptr_ takes its own
// lock after `lock_`. The application's fast path (a load or store to a
// page with enough access) never enters here.
//
// Service: messages are handled by whichever thread holds the lock and polls:
// a thread waiting inside the library (fault, lock, barrier) polls itself;
// when no thread is waiting, the service thread polls, spinning shortly after
// activity and then napping (AGORA_SERVICE=adaptive) or always spinning
// (AGORA_SERVICE=poll). A polling waiter handles one message at a time and
// returns as soon as its own wait is over. With AGORA_WAIT=block waiting
// threads sleep instead; the service thread serves, woken by a doorbell that
// every message then rings. See docs/service.md; every time it waits or paces
// itself by is in service_timing.h.
//
// The class is defined across files named by concern; each group of
// declarations below names its file:
//   runtime_start.cpp      init and stop            runtime_wait.cpp     waiting, noted waits
//   runtime_messages.cpp   sends, poll, dispatch    runtime_hang.cpp     the hang watch's view
//   runtime_service.cpp    the service thread       runtime_pages.cpp    EngineHost page hooks
//   runtime_faults.cpp     the fault path, fork()   placed_memory.cpp    placed allocations' waits
//   runtime_memory.cpp     alloc, malloc, free      runtime_collectives.cpp  barrier, reduce
//   runtime_locks.cpp      locks                    runtime_stats.cpp    statistics at finalize
//   runtime_threads.cpp    fork-join threads, finalize's wait for them
//   runtime_thread_sync.cpp, runtime_thread_reduce.cpp  sync among threads
//   program_windows_setup.cpp, global_stacks.cpp   program mode
//   runtime_server.cpp     a memory server's serving loop (docs/memory-servers.md)
//   runtime_rank_calls.cpp calls run on another rank (rank_calls/: its workers)
//   runtime_cache.cpp, runtime_one_sided.cpp, runtime_doorbells.cpp,
//   runtime_home_writes.cpp, runtime_gptr.cpp      the subsystems' host adapters
// Process-wide helpers they share (fault target, thread tokens): runtime_internal.h.
// MPI is reached only through transport_ (src/transport/mpi).
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "common/config.h"
#include "common/stats.h"
#include "memory/address_space.h"
#include "memory/arena_allocator.h"
#include "platform/platform.h"
#include "protocol/engine.h"
#include "runtime/cache/copy_cache.h"
#include "runtime/doorbells/doorbells.h"
#include "runtime/global_pointers/global_pointers.h"
#include "runtime/home_writes/home_writes.h"
#include "runtime/locks/lock_ids.h"
#include "runtime/memory_servers/memory_servers.h"
#include "runtime/one_sided/one_sided_reads.h"
#include "runtime/phase_times.h"
#include "runtime/rank_calls/rank_calls.h"
#include "sync/atomic_service.h"
#include "sync/barrier_service.h"
#include "sync/collective_ledger.h"
#include "sync/condition_service.h"
#include "sync/hang_watch.h"
#include "sync/lock_service.h"
#include "sync/memory_service.h"
#include "sync/reduce_service.h"
#include "sync/semaphore_service.h"
#include "sync/thread_barrier_service.h"
#include "sync/thread_reduce_service.h"
#include "sync/thread_service.h"
#include "transport/mpi/mpi_transport.h"

namespace agora {

class Runtime final : public EngineHost {
 public:
  static constexpr uintptr_t kBase = 0x200000000000ull;  // 32 TiB: clear of heap, PIE, stacks, mmap

  // ---- start and stop (runtime_start.cpp) ----
  // Returns nullptr (after printing why) if start-up fails. publish(rt) runs
  // before the start-up barrier (threads may start here from then on).
  static Runtime *start(int *argc, char ***argv, int *status, const std::function<void(Runtime *)> &publish);
  int stop();  // collective; deletes nothing (the caller does)
  // stop's second half, after the service has stopped (memory servers too):
  // the finalize collectives over every rank, then MPI_Finalize.
  int stop_transport();
  // True in a process made by fork() from a rank: it is not a rank (runtime_faults.cpp).
  static bool in_forked_child();

  // ---- EngineHost ----
  Rank rank() const override { return transport_.rank(); }
  // Every MPI process, memory servers included: the engine's view (homes and
  // copies are indexed by these ranks). The program's ranks: compute_nranks().
  Rank nranks() const override { return transport_.nranks(); }
  // Sends (runtime_messages.cpp); a request also rings dst's doorbell.
  void send(Rank dst, MsgHeader header, Payload payload = {}) override;
  void send_request(Rank dst, MsgHeader header, Payload payload = {}) override;
  void send_control(Rank dst, MsgHeader header, Payload payload = {}) override;
  Stats &stats() override { return stats_; }
  size_t page_size() const override { return platform::kPageSize; }
  // Page hooks (runtime_pages.cpp).
  void set_access(PageId page, Access access) override;
  void set_access_run(PageId first, PageId count, Access access) override;
  std::byte *frame(PageId page) override;
  void replacing_frame(PageId page) override;
  void filling_frames(PageId first, PageId count) override;
  Rank home_of(PageId page) const override { return space_->home_of(page); }
  bool page_allocated(PageId page) const override;
  // Agora threads started here, plus main unless it only waits in finalize.
  bool sole_application_thread() const override { return threads_->running() + (main_finalizing_ ? 0 : 1) <= 1; }
  // Home write tracking (home_writes_; runtime_home_writes.cpp): the
  // kernel's, when AGORA_HOME_WRITES=auto and this kernel can.
  bool tracks_home_writes() const override { return home_writes_.available(); }
  void track_home_writes(PageId first, PageId count) override;
  void collect_home_writes(std::vector<PageId> *written) override;
  // One-sided reads (runtime_one_sided.cpp), AGORA_FETCH=auto.
  std::byte *home_meta() override;
  bool read_remote(Rank home, PageId first, uint32_t count, uint32_t meta_bytes) override;
  void collect_newly_shared(std::vector<PageId> *pages) override;

  // ---- API operations (called without the lock held) ----
  // The fault path (runtime_faults.cpp).
  bool handle_fault(void *addr, bool is_write);
  // Allocation (runtime_memory.cpp).
  void *alloc_collective(uint64_t bytes, Placement placement, Rank rank);
  void *malloc_local(uint64_t bytes);
  // Non-collective placed allocation, sequenced by rank 0 (placed_memory.cpp).
  void *malloc_placed(uint64_t bytes, Placement placement, Rank rank);
  int free_any(void *ptr);
  // Locks (runtime_locks.cpp). call_site: where the program created the
  // locks (module offset), for the check that every rank created the same locks.
  uint64_t create_locks(uint64_t count, uint64_t call_site);
  int lock(uint64_t id);
  int unlock(uint64_t id);
  int trylock(uint64_t id);       // AGORA_OK or AGORA_BUSY
  int lock_destroy(uint64_t id);  // AGORA_OK or AGORA_ERR_MISUSE (held or waited for)
  bool holds_lock(uint64_t id);   // the calling thread holds it (no message, no wait)
  // Atomics on global memory (runtime_atomics.cpp, docs/atomics.md): under
  // sc the hardware's instructions are atomic across ranks already (a page
  // is writable on one rank at a time); the other protocols take the word's
  // lock (AtomicService).
  bool atomics_in_hardware() const { return config_.protocol == "sc"; }
  int atomic(const AtomicCall &c, bool *exchanged);
  // SPMD collectives (runtime_collectives.cpp).
  int barrier(bool patient = false, CollectiveKind kind = CollectiveKind::Barrier);
  int reduce(void *buf, size_t count, ReduceType type, ReduceOp op, CollectiveKind kind = CollectiveKind::Reduce);
  // agora_flush / agora_flush_all (runtime_flush.cpp, docs/flush.md).
  int flush(const void *ptr, size_t bytes);
  int flush_all();
  // Fork-join threads (runtime_threads.cpp): target -1 places by the
  // AGORA_THREADS_PER_RANK rule.
  int thread_create(Rank target, void *(*fn)(void *), void *arg, Rank *where, uint64_t *id);
  int thread_join(Rank where, uint64_t id, void **ret);
  int thread_slots() const { return (int)(config_.threads_per_rank * (uint64_t)compute_nranks()); }
  // Job-wide id of the calling thread: (rank+1) << 48 | id for an agora
  // thread (so pthread_t can carry it), | 1 << 47 | a token for any other.
  uint64_t thread_self() const;

  // Synchronisation among threads (runtime_thread_sync.cpp). Objects are
  // keys: a created lock's id, or the address of an object in global memory.
  int thread_barrier_wait(uint64_t object, uint32_t count);           // AGORA_OK or AGORA_BARRIER_SERIAL
  int cond_wait(uint64_t object, uint64_t lock_id, double deadline);  // deadline < 0: none
  int cond_signal(uint64_t object, bool all);
  int sem_init(uint64_t object, uint64_t value);
  int sem_wait(uint64_t object, bool try_only);
  int sem_post(uint64_t object);
  int sem_get_value(uint64_t object, int *value);
  int sem_destroy(uint64_t object);
  // Keys that are addresses (address-named objects) are managed at their page's home.
  Rank manager_of_key(uint64_t key) const;
  // Reductions among threads (runtime_thread_reduce.cpp).
  int thread_reduction_init(uint64_t object, uint32_t count);
  int thread_reduce(uint64_t object, void *buf, size_t n, ReduceType type, ReduceOp op);
  int thread_reduction_destroy(uint64_t object);

  // ---- global pointers (global_pointers/global_pointers.h, docs/gptr.md) ----
  GlobalPointers &global_pointers() { return gptr_; }

  // ---- program mode (docs/programs.md) ----
  // The executable's globals are global memory (program_windows_setup.cpp)
  // and bodies run on global stacks.
  bool program_mode() const { return program_mode_; }
  // Runs an agora thread's or main's body fn(arg) (global_stacks.cpp): on a
  // stack in global memory in program mode; *exited says it ended with
  // agora_thread_exit, whose value it returns.
  void *run_body(void *(*fn)(void *), void *arg, const std::string &who, bool *exited);
  // After stop(): rank 0 opens the windows for the program's exit handlers.
  void open_program_windows_after_stop();
  // stop, rank 0, with memory servers: reads every page of the windows
  // (program_windows_setup.cpp).
  void fetch_program_windows();
  // exit(status) by an agora thread on any rank (program mode;
  // runtime_threads.cpp): rank 0 ends the job, through the handler set
  // there, after acquiring the caller's writes (ThreadService::request_exit).
  void request_job_exit(int status, bool quick);
  void set_job_exit_handler(std::function<void(int status, bool quick)> handler);
  // Runs `request` on rank `target` through the handler set there
  // (runtime_rank_calls.cpp; program mode's job-wide descriptors) and
  // returns its reply. 0 or a negative status.
  int rank_call(Rank target, Payload request, std::vector<std::byte> *reply);
  void set_rank_call_handler(RankCalls::Handler handler) { rank_calls_->set_handler(std::move(handler)); }
  // Ends the job at once with status, without finalize (runtime_start.cpp):
  // mpirun stops the other ranks.
  [[noreturn]] void end_job_now(int status);

  // ---- memory servers (runtime_server.cpp, docs/memory-servers.md) ----
  // The ranks the program sees (agora_nranks, placement, barriers, locks):
  // all but the memory servers, which are the last ranks.
  Rank compute_nranks() const { return servers_.compute_nranks(); }
  bool is_memory_server() const { return servers_.is_server(); }
  // A memory server's life after init: serves until every compute rank has
  // finalized, then takes part in the finalize collectives and exits 0.
  [[noreturn]] void serve_as_memory_server();

  const Config &config() const { return config_; }
  const AddressSpace &space() const { return *space_; }
  // Ends an out-of-global-memory message: "raise AGORA_MEMORY (--memory;
  // now 4G)", saying when the value is the default chosen at start.
  std::string raise_memory_hint() const;
  // Statistics (runtime_stats.cpp); each takes the lock the counters are
  // updated under.
  std::string stats_json();
  Stats stats_snapshot();
  void stats_reset();
  // Collective (like reduce): the job's statistics, every rank's snapshot
  // combined (sums; peaks max). 0 or a negative status.
  int stats_job(Stats *out);

 private:
  Runtime() = default;
  // ---- start-up (runtime_start.cpp) ----
  bool init(int *argc, char ***argv, std::string *error);
  // The global range (AGORA_MEMORY, rounded down to whole arenas: *bytes), its
  // layout and this rank's arena.
  bool reserve_global_memory(uint64_t *bytes, std::string *error);
  // AGORA_MEMORY unset: the size that fits every rank (default_range_size),
  // agreed by all (collective).
  bool choose_default_memory(std::string *error);
  // The sync services, attached to the engine and the collective ledger, and
  // the memory service (remote frees; rank 0 sequences the placed region).
  void create_sync_services();

  // A flush ended; `idle`: it had nothing to wait for (runtime_flush.cpp).
  void after_flush(bool idle);

  // ---- waiting (runtime_wait.cpp) ----
  // Where a thread of this rank waits inside Agora, for the hang watch.
  enum class WaitKind : uint8_t {
    Fault,
    Lock,
    Collective,
    Free,
    ThreadCreate,
    ThreadJoin,
    FinalizeThreads,
    ThreadBarrier,
    Condition,
    Semaphore,
    Placed,
    ThreadReduce,
    Gptr,
    Flush,
    RankCall
  };
  struct WaitNote {
    WaitKind kind;
    uint64_t a = 0, b = 0;  // address and home, lock id, tag, rank and id, ... (see describe_wait)
    double since = 0;
    const Waiter *waiter = nullptr;  // what it waits for (none: finalize's wait for local threads)
  };
  // Polls until w completes; handles messages meanwhile. A patient wait
  // (join, finalize: possibly long) stops polling after a while and sleeps,
  // leaving the messages to the service thread and the core to computing
  // threads.
  void wait(Waiter &w, bool patient = false);
  // Polls (or sleeps briefly) until w completes or the deadline passes; true if it completed.
  bool wait_until(Waiter &w, double deadline);
  // Runs start under the lock (a non-zero status from it is returned at
  // once, nothing waits), then waits for w with the wait noted for the hang
  // watch; adds the time taken to *time_sum, if given. Returns w.status.
  int noted_wait(WaitNote &note, Waiter &w, const std::function<int()> &start, bool patient = false,
                 double *time_sum = nullptr);
  // Starts a sync operation under the lock (start returns 0, or an error
  // status and then nothing waits), waits for it, adds the time to sync_time_s.
  int timed_sync(WaitNote &note, const std::function<int(Waiter *)> &start, bool patient = false);
  // patient: a wait that may last long (see wait()).
  int sync_op(WaitKind kind, uint64_t object, const std::function<void(Waiter *)> &start, bool patient = false);

  // ---- the hang watch's view of this rank (runtime_hang.cpp) ----
  // lock_ held. A note whose waiter is complete no longer blocks its thread
  // (it may not have run since), so the hang watch does not count it.
  void wait_begin(WaitNote *note, const Waiter *waiter);
  void wait_end(WaitNote *note);  // lock_ held
  std::string describe_wait(const WaitNote &note) const;
  RankState hang_snapshot();  // lock_ held
  void hang_tick();

  // ---- messages in (runtime_messages.cpp) and the service thread (runtime_service.cpp) ----
  // lock_ held; delivers at most `budget` messages, returns how many.
  int poll_locked(int budget = 16);
  void dispatch(const MsgHeader &m, Payload p);
  void service_loop();

  // ---- allocation (runtime_memory.cpp, runtime_pages.cpp) ----
  // Opens this rank's home pages of a new allocation in the application view,
  // with the access the protocol gives a home (fatal if mprotect fails).
  void open_home_pages(const CollectiveRun &run, const char *what, uint64_t bytes);
  // lock_ held (MemoryService's free_local hook, and free_any on this rank).
  int free_local(uint64_t offset);
  // ---- placed allocations (placed_memory.cpp); MemoryService sequences them ----
  int free_placed(uintptr_t addr);
  // MemoryService's hooks, every rank, lock_ held: a run starts (record it,
  // homes open their pages) or ends (drop the record, close and zero it).
  void placed_opened(const CollectiveRun &run);
  void placed_closed(PageId first, PageId count);

  // ---- locks (runtime_locks.cpp) ----
  static uint64_t thread_token();  // names the calling thread within the rank (lock holders)

  // ---- fork-join threads (runtime_threads.cpp) ----
  int start_thread(uint64_t id, Payload fn, uint64_t arg);  // ThreadService's starter
  void run_thread(uint64_t id, void *(*fn)(void *), void *arg);
  void reap_os_threads();  // lock_ held: joins those that have finished, never blocks
  void finish_threads();   // finalize: until no agora thread runs on any rank

  // ---- statistics (runtime_stats.cpp) ----
  void report_stats();

  // ---- home write tracking: home_writes_ (HomeWrites, home_writes/home_writes.h),
  // reaching the rank through a HomeWritesSide (runtime_home_writes.cpp) ----
  class HomeWritesSide;
  static std::unique_ptr<HomeWritesHost> make_home_writes_host(Runtime &rt);
  // For an mprotect refused at the kernel's mapping limit: the mappings in
  // use, vm.max_map_count, and what to do about it.
  std::string map_limit_advice() const;

  // ---- the bounded cache of remote pages and its frame pool: cache_ (CopyCache,
  // cache/copy_cache.h), reaching the rank through a CacheSide (runtime_cache.cpp) ----
  class CacheSide;
  static std::unique_ptr<CacheHost> make_cache_host(Runtime &rt);
  // The protection change itself (runtime_pages.cpp), one mprotect per
  // stretch of consecutive addresses; pooled copies are mapped in by the cache.
  void protect_run(PageId first, PageId count, Access access);
  // mprotect of `pages` pages of the view at `start`; at the mapping limit
  // the job ends saying so.
  void protect_view(void *start, PageId pages, Access access);

  // ---- one-sided reads: one_sided_ (OneSidedReads, one_sided/one_sided_reads.h),
  // reaching the rank through a OneSidedSide (runtime_one_sided.cpp) ----
  class OneSidedSide;
  static std::unique_ptr<OneSidedHost> make_one_sided_host(Runtime &rt);

  // ---- doorbells: doorbells_ (Doorbells, doorbells/doorbells.h), reaching the
  // rank through a DoorbellsSide (runtime_doorbells.cpp) ----
  class DoorbellsSide;
  static std::unique_ptr<DoorbellsHost> make_doorbells_host(Runtime &rt);

  // ---- program mode (program_windows_setup.cpp, global_stacks.cpp) ----
  bool setup_program_windows(std::string *error);
  // A fault in the guard below a global stack: fatal, naming the thread.
  bool stack_guard_fault(void *addr);

  // ---- state (members in construction order) ----
  bool main_finalizing_ = false;  // under lock_: main runs no program code any more
  bool program_mode_ = false;
  std::mutex guards_mutex_;
  std::map<uintptr_t, std::string> guards_;  // guard address -> whose stack

  Config config_;
  MpiTransport transport_;
  // Memory servers: the program's ranks and this rank's role. The sync
  // services see only the compute ranks (servers_.compute_host()); the
  // engine and the hang watch see every rank.
  MemoryServers servers_{*this};
  platform::GlobalRange range_;
  std::optional<AddressSpace> space_;
  std::optional<ArenaAllocator> arena_;
  std::unique_ptr<ProtocolEngine> engine_;
  // The bounded cache of remote pages and its frame pool, under lock_.
  std::unique_ptr<CacheHost> cache_host_ = make_cache_host(*this);
  CopyCache cache_{*cache_host_};
  std::optional<LockService> locks_;
  std::optional<BarrierService> barrier_;
  std::optional<ReduceService> reduce_;
  std::optional<ThreadService> threads_;
  std::optional<ThreadBarrierService> thread_barriers_;
  std::optional<ThreadReduceService> thread_reductions_;
  std::optional<SemaphoreService> semaphores_;
  std::optional<ConditionService> conditions_;
  std::optional<MemoryService> memory_;  // remote frees, placed allocations
  // Calls other ranks ask this one to run (rank_calls/): never deleted, as
  // its detached workers may outlive the runtime.
  void rank_call_reply(Rank to, uint64_t token, const std::vector<std::byte> &reply);
  void rank_call_message(const MsgHeader &m, Payload p);  // lock_ held
  RankCalls *rank_calls_ = new RankCalls(
      [this](Rank to, uint64_t token, const std::vector<std::byte> &reply) { rank_call_reply(to, token, reply); });
  // Global pointers: the engine and its segment, under their own lock (taken
  // after lock_ when both are held; a cache hit takes it alone, so it never
  // waits for the service thread's polling). GlobalPointersSide:
  // runtime_gptr.cpp.
  class GlobalPointersSide;
  static std::unique_ptr<GlobalPointersHost> make_gptr_host(Runtime &rt);
  std::unique_ptr<GlobalPointersHost> gptr_host_ = make_gptr_host(*this);
  GlobalPointers gptr_{*gptr_host_, config_};
  // Threads this rank created by the placement rule and has not joined: at
  // most thread_slots() at once (outside program mode).
  std::set<std::pair<Rank, uint64_t>> placed_live_;
  uint64_t threads_placed_ = 0;  // agora_thread_create calls here (placement rule)
  // Under lock_: the OS threads of agora threads started here and not yet
  // joined (reaped at each start, all joined by finish_threads).
  std::vector<platform::ThreadHandle> os_threads_;
  Stats stats_;
  // Lock ids handed out and the collective creations' signatures (under
  // lock_); ids from kBase up are address-named locks.
  LockIds lock_ids_{kBase};
  CollectiveLedger ledger_;
  std::optional<HangWatch> watch_;
  std::vector<WaitNote *> waits_;      // current waits of this rank's threads
  double last_inside_ = 0;             // when a wait last began or ended
  double next_watch_tick_ = 0;         // service thread only
  std::vector<int> internal_threads_;  // sorted kernel tids of MPI's threads and the service thread
  uint64_t messages_in_ = 0;           // watch messages excluded (sent: stats_.messages_sent)
  PhaseTimes phases_;                  // start-up's, then finalize's (AGORA_DEBUG=1 prints them)

  std::mutex lock_;
  std::thread service_;
  std::atomic<bool> running_{false};
  std::atomic<int> waiting_threads_{0};
  // AGORA_WAIT=block (the same on every rank): waiting threads sleep, the
  // service thread serves, and every message rings its destination.
  bool block_waits_ = false;
  std::atomic<bool> every_rank_rung_{false};  // block_waits_, and no rank on another host
  // Service threads of other ranks, to ring when asking them to act, and
  // this rank's remote doorbell socket.
  std::unique_ptr<DoorbellsHost> doorbells_host_ = make_doorbells_host(*this);
  Doorbells doorbells_{*doorbells_host_};
  std::atomic<int> service_tid_{0};

  // Home write tracking: the kernel's tracker and the runs tracked (under lock_).
  std::unique_ptr<HomeWritesHost> home_writes_host_ = make_home_writes_host(*this);
  HomeWrites home_writes_{*home_writes_host_};
  // One-sided reads: the windows (in its host), the metadata, the reads
  // completed for the engine (under lock_).
  std::unique_ptr<OneSidedHost> one_sided_host_ = make_one_sided_host(*this);
  OneSidedReads one_sided_{*one_sided_host_};
};

}  // namespace agora
