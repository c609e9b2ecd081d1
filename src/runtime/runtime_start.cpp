// Start-up and shut-down of one rank's runtime: configuration, MPI, the
// global range, the engine and sync services, the fault handler, the service
// thread and the doorbells (init); and the reverse, after the finalize
// quiescence (stop).
#include <algorithm>
#include <cstdlib>

#include "common/log.h"
#include "common/options.h"
#include "memory/default_range_size.h"
#include "observe/observe.h"
#include "runtime/lone_rank.h"
#include "runtime/oversubscription.h"
#include "runtime/program_request.h"
#include "runtime/runtime.h"
#include "runtime/runtime_internal.h"
#include "runtime/service_timing.h"
#include "runtime/store_trace.h"

namespace agora {

using namespace runtime_internal;

namespace {
MpiTransport *g_abort_transport = nullptr;

// A rank that exits while the runtime is live leaves its peers waiting on it;
// say which rank left and how, before mpirun ends the job. (A forked child
// leaving ends nothing: it says nothing.)
void report_early_exit(int status, void *) {
  if (g_fault_target && !g_forked_child.load())
    log_error("exit(%d) called before agora_finalize; the job ends", status);
}
void abort_job(int status) {
  if (g_abort_transport) g_abort_transport->abort(status);
}
}  // namespace

Runtime *Runtime::start(int *argc, char ***argv, int *status, const std::function<void(Runtime *)> &publish) {
  auto *rt = new Runtime();
  rt->phases_.begin();
  std::string error;
  if (!rt->init(argc, argv, &error)) {
    log_error("agora_init failed: %s", error.c_str());
    *status = AGORA_ERR_CONFIG;
    return nullptr;  // the partially built runtime is left to process exit
  }
  // Published before the start-up barrier: once another rank is past it, it
  // may start threads here, and they call the API before this thread has
  // returned from the barrier.
  publish(rt);
  // A memory server never returns to the program (runtime_server.cpp).
  if (rt->is_memory_server()) rt->serve_as_memory_server();
  *status = rt->barrier() == AGORA_OK ? AGORA_OK : AGORA_ERR_CONFIG;
  rt->phases_.mark("barrier");
  log_debug("start-up %s", rt->phases_.text().c_str());
  return rt;
}

bool Runtime::init(int *argc, char ***argv, std::string *error) {
  // Configuration first: a bad setting must fail before MPI starts.
  if (!config_from_env(&config_, error, protocol_names())) return false;
  for (auto [name, value] :
       {std::pair{"AGORA_GPTR_LINE", config_.gptr_line_bytes}, std::pair{"AGORA_GPTR_BLOCK", config_.gptr_block_bytes}})
    if (value & (value - 1)) {
      *error = std::string(name) + "=" + std::to_string(value) + " is not a power of two";
      return false;
    }
  log_set_debug(config_.debug);
  // A doorbell signal the program chose is checked before MPI starts; the
  // default is picked after, once MPI's libraries have taken their signals.
  if (config_.doorbell_signal && !platform::doorbell_setup((int)config_.doorbell_signal, error)) return false;
  // Threads that MPI starts are not the application's (the hang watch counts those).
  std::vector<int> threads_before = platform::thread_ids();
  phases_.mark("config");
  if (!transport_.init(argc, argv, error)) return false;
  phases_.mark("MPI_Init");
  if (!lone_rank_check(nranks(), error)) return false;
  log_set_rank(rank());
  g_abort_transport = &transport_;
  log_set_abort_hook(abort_job);
  if (!servers_.decide(&config_, platform::kPageSize, error)) return false;
  if (!stats_json_path_usable(config_.stats_json_path, rank(), transport_, error)) return false;
  if (rank() == 0)
    for (const std::string &message : config_unknown_variables()) log_error("%s", message.c_str());
  WaitDecision waits = decide_wait_mode(config_, transport_);
  block_waits_ = waits.block;
  waiter_wake = wake_sleeper;
  log_debug("waiting threads: %s", waits.why.c_str());
  phases_.mark("checks");

  uint64_t page = platform::kPageSize;
  uint64_t bytes = 0;
  if (!reserve_global_memory(&bytes, error)) return false;
  phases_.mark("reserve");
  if (!observe_start(config_, rank(), nranks(), kBase, platform::kPageSize, bytes / platform::kPageSize, error))
    return false;
  home_writes_.open(config_);
  one_sided_.alloc_meta(config_.fetch);
  phases_.mark("home writes+metadata");
  EngineOptions engine_options;
  engine_options.intervals = config_.intervals;
  engine_options.prefetch_max = config_.prefetch;
  engine_options.refresh = config_.refresh == RefreshMode::On;
  engine_options.flush = config_.flush;
  engine_ = protocol_create(config_.protocol, *this, engine_options);
  // The bounded cache of remote pages: AGORA_CACHE, or the kernel's mapping limit.
  if (!cache_.open(config_, platform::vm_map_limit(), engine_->reclaims_home(), servers_.is_server(), error))
    return false;
  phases_.mark("engine+cache");
  // This rank's arena is homed here (unless memory servers home it): open in
  // the application view as far as the protocol allows its home pages.
  if (space_->servers() == 0)
    platform::vm_protect((void *)space_->addr_of(space_->arena_first_page(rank())), space_->arena_pages() * page,
                         engine_->home_access());
  if (program_request() && !setup_program_windows(error)) return false;
  phases_.mark("program windows");
  one_sided_.open();  // collective; the service view does not move from here on
  phases_.mark("MPI windows");
  store_trace_set_global_memory(*space_);  // what traced stores may record

  create_sync_services();
  if (!config_.doorbell_signal && !platform::doorbell_setup(0, error)) return false;
  phases_.mark("sync services");
  g_fault_target = this;
  on_exit(report_early_exit, nullptr);
  if (!platform::fault_handler_install(fault_trampoline, kBase, kBase + bytes)) {
    *error = "cannot install the SIGSEGV handler";
    return false;
  }
  HangWatch::Options watch_options;
  watch_options.period = service_timing::kHangWatchReport_s;
  watch_options.warn_after = config_.hang_warn_s;
  watch_options.timeout = config_.hang_timeout_s;
  // The hang watch sees every rank, memory servers included (a stopped
  // server is named; their messages count in the deadlock proof).
  watch_.emplace(*this, watch_options, [this] { return hang_snapshot(); });
  platform::global_io_enable(kBase, kBase + bytes, io_range_usable);
  phases_.mark("fault handler+hang watch");
  running_ = true;
  if (servers_.is_server()) {
    // The server's own thread serves (runtime_server.cpp): it is the one rung.
    platform::doorbell_block();
    service_tid_.store(platform::thread_id());
  } else {
    service_ = std::thread([this] { service_loop(); });
  }
  while (service_tid_.load() == 0) platform::cpu_relax();
  phases_.mark("service thread");
  doorbells_.exchange(config_, service_tid_.load());
  phases_.mark("doorbells");
  {
    std::vector<int> after = platform::thread_ids();
    std::sort(threads_before.begin(), threads_before.end());
    std::sort(after.begin(), after.end());
    std::set_difference(after.begin(), after.end(), threads_before.begin(), threads_before.end(),
                        std::back_inserter(internal_threads_));
  }
  every_rank_rung_ = block_waits_ && doorbells_.all_by_signal();
  log_debug("started: protocol %s, %llu bytes of global memory at %p", engine_->name(), (unsigned long long)bytes,
            (void *)kBase);
  return true;  // start() ends with the start-up barrier
}

bool Runtime::choose_default_memory(std::string *error) {
  // Where /proc cannot tell, the old fixed default (4G).
  platform::VmRoom room;
  const uint64_t fit = platform::vm_room(kBase, &room) ? room.largest : 8ull << 30;
  // The layout derives from the size: every rank takes the smallest fit.
  const uint64_t everywhere = (uint64_t)-transport_.allreduce_max(-(int64_t)std::min<uint64_t>(fit, INT64_MAX));
  const uint64_t bytes = default_range_size(everywhere);
  if (bytes == 0) {
    *error = "AGORA_MEMORY is unset and no global range fits: at most " + platform::human_bytes(everywhere) +
             " fits in some rank, of which the default takes half (room for the program); raise ulimit -v, or "
             "set AGORA_MEMORY (--memory) below that";
    return false;
  }
  config_.memory_bytes = bytes;
  log_debug("AGORA_MEMORY unset: %s (half of the %s that fit in every rank, a power of two, at most %s)",
            option_size_text(bytes).c_str(), platform::human_bytes(everywhere).c_str(),
            option_size_text(kDefaultMemoryCap).c_str());
  return true;
}

std::string Runtime::raise_memory_hint() const {
  const bool chosen = option_source(*option_find("AGORA_MEMORY")) == OptionSource::Default;
  return "raise AGORA_MEMORY (--memory; now " + option_size_text(config_.memory_bytes) +
         (chosen ? ", the default on this machine: docs/memory.md)" : ")");
}

bool Runtime::reserve_global_memory(uint64_t *bytes_out, std::string *error) {
  if (config_.memory_bytes == 0 && !choose_default_memory(error)) return false;
  uint64_t page = platform::kPageSize;
  // Each arena gets a whole number of pages.
  // Each compute rank has an arena (memory servers allocate nothing).
  const uint64_t arenas = (uint64_t)compute_nranks();
  uint64_t bytes = config_.memory_bytes / (page * 2 * arenas) * (page * 2 * arenas);
  if (bytes == 0) {
    *error = "AGORA_MEMORY is too small for " + std::to_string(arenas) + " ranks";
    return false;
  }
  if (!platform::vm_reserve(kBase, bytes, &range_, error)) {
    *error = "AGORA_MEMORY=" + platform::human_bytes(config_.memory_bytes) + " cannot be mapped: " + *error +
             "; lower AGORA_MEMORY (--memory)";
    return false;
  }
  if (!platform::vm_exclude_from_fork(range_, error)) return false;
  if (!platform::fork_child_hook_install(on_fork_child, error)) return false;
  space_.emplace(kBase, bytes, page, compute_nranks());
  if (config_.memory_servers > 0)
    space_->set_memory_servers(compute_nranks(), (Rank)config_.memory_servers, config_.stripe_bytes / page,
                               servers_.is_server());
  // A server allocates nothing (its arena, rank 0's range, stays unused).
  Rank arena_rank = servers_.is_server() ? 0 : rank();
  arena_.emplace(space_->arena_first_page(arena_rank) * page, space_->arena_pages() * page, page);
  *bytes_out = bytes;
  return true;
}

void Runtime::create_sync_services() {
  // The services see the compute ranks only (servers_.compute_host());
  // the engine, every rank.
  locks_.emplace(servers_.compute_host());
  locks_->attach(engine_.get());
  locks_->set_signatures([this](uint64_t id) { return lock_ids_.signature(id); });
  barrier_.emplace(servers_.compute_host());
  barrier_->attach(engine_.get());
  barrier_->attach(&ledger_);
  reduce_.emplace(servers_.compute_host());
  reduce_->attach(&ledger_);
  threads_.emplace(servers_.compute_host(), *engine_,
                   [this](uint64_t id, Payload fn, uint64_t arg) { return start_thread(id, fn, arg); });
  auto manager_of = [this](uint64_t key) { return manager_of_key(key); };
  locks_->set_managers(manager_of);
  thread_barriers_.emplace(servers_.compute_host(), manager_of);
  thread_barriers_->attach(engine_.get());
  thread_reductions_.emplace(servers_.compute_host(), manager_of);
  semaphores_.emplace(servers_.compute_host(), manager_of);
  semaphores_->attach(engine_.get());
  conditions_.emplace(servers_.compute_host(), manager_of);
  MemoryService::Hooks memory_hooks;
  memory_hooks.free_local = [this](uint64_t offset) { return free_local(offset); };
  memory_hooks.placed_opened = [this](const CollectiveRun &run) { placed_opened(run); };
  memory_hooks.placed_closed = [this](PageId first, PageId count) { placed_closed(first, count); };
  // Placed allocations are announced to every rank, memory servers included
  // (they forget and zero a freed run's pages, as its homes).
  memory_.emplace(*this, *engine_, std::move(memory_hooks), space_->placed_first_page(),
                  space_->placed_capacity_pages());
}

int Runtime::stop() {
  phases_.begin();
  gptr_.release();      // this rank's global-pointer writes reach their homes
  finish_threads();     // ends with a barrier
  rank_calls_->stop();  // no thread runs anywhere: no call comes any more
  phases_.mark("threads+barrier");
  fetch_program_windows();  // memory servers: rank 0's copies of the globals become final
  {
    // Nothing can hang from here on; and a watch message sent now could
    // reach a rank that has finalised MPI.
    std::lock_guard<std::mutex> g(lock_);
    watch_->stop();
  }
  // Let every reply this rank still owes leave before the service stops.
  {
    std::lock_guard<std::mutex> g(lock_);
    servers_.tell_done();  // none without memory servers
    while (transport_.sends_pending()) poll_locked();
  }
  phases_.mark("hang watch+sends");
  running_ = false;
  service_.join();
  phases_.mark("service thread");
  return stop_transport();
}

void Runtime::end_job_now(int status) {
  // A rank that leaves with a non-zero status makes mpirun end the job with
  // that status (and a plain report); one that leaves with 0 before
  // MPI_Finalize is reported as a failure, so status 0 goes through
  // MPI_Abort, which mpirun reports but whose status it keeps.
  if (status != 0) std::_Exit(status);
  transport_.abort(0);
  std::_Exit(0);
}

int Runtime::stop_transport() {
  one_sided_.close();  // collective: no rank reads another's windows any more
  phases_.mark("MPI windows");
  doorbells_.report();
  doorbells_.close_remote();
  report_stats();
  observe_stop();  // writes the trace and profile files
  phases_.mark("doorbells+stats");
  transport_.barrier();
  phases_.mark("barrier");
  platform::global_io_disable();
  platform::fault_handler_uninstall();
  g_fault_target = nullptr;
  transport_.finalize();
  phases_.mark("MPI_Finalize");
  log_debug("finalize %s", phases_.text().c_str());
  g_abort_transport = nullptr;
  log_set_abort_hook(nullptr);
  std::string ignored;
  platform::fork_child_hook_install(nullptr, &ignored);
  home_writes_.close();
  platform::vm_release(&range_);
  cache_.close_frame_pool();
  return 0;
}

}  // namespace agora
