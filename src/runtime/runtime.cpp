#include "runtime/runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <system_error>

#include "common/log.h"
#include "observe/observe.h"
#include "runtime/oversubscription.h"
#include "runtime/program_request.h"
#include "runtime/store_trace.h"

namespace agora {

namespace {
Runtime *g_fault_target = nullptr;
std::atomic<bool> g_forked_child{false};

bool fault_trampoline(void *addr, bool is_write) {
  if (g_forked_child.load(std::memory_order_relaxed)) {
    // The child has no global memory (MADV_DONTFORK) and is no rank: say
    // so and die of the fault, rather than wait on a protocol.
    log_error("global memory is not available in a process made by fork() (%s of %p): only the "
              "ranks themselves may touch it; pass data to the child through a pipe or a file, "
              "or exec a program",
              is_write ? "write" : "read", addr);
    return false;
  }
  return g_fault_target && g_fault_target->handle_fault(addr, is_write);
}

// System calls may move bytes through global memory that is allocated.
bool io_range_usable(uintptr_t addr, size_t len) {
  Runtime *rt = g_fault_target;
  if (!rt) return false;
  const AddressSpace &space = rt->space();
  uintptr_t end = addr + len;  // callers pass len > 0
  if (end < addr) return false;  // (maybe_allocated below covers program mode's windows)
  for (uintptr_t a = addr & ~(uintptr_t)(space.page_size() - 1); a < end; a += space.page_size())
    if (!space.maybe_allocated(a)) return false;
  return true;
}

// Locks are held by threads; this names the calling thread within the rank.
uint64_t this_thread_token() {
  static std::atomic<uint64_t> next{1};
  thread_local uint64_t token = next.fetch_add(1);
  return token;
}

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

// First thing in the child of fork(): it is not a rank. Global memory is
// absent there; the fault handler, the API and exit() must not act for the
// rank (its locks may be held by threads the child does not have).
void on_fork_child() {
  g_forked_child.store(true);
  platform::global_io_disable();  // a global buffer now fails with EFAULT, as unmapped memory does
  log_set_abort_hook(nullptr);    // a fatal error here must not abort the parent's job
  log_set_forked_child(platform::process_id());
}

enum MemoryOp : uint16_t { kFreeRequest = 1, kFreeReply = 2 };  // placed ones follow (placed_memory.cpp)

// The agora thread running on this OS thread (id 0: not one, e.g. main), so
// that a thread joining itself is an error rather than a hang.
thread_local Rank tl_thread_rank = -1;
thread_local uint64_t tl_thread_id = 0;

// AGORA_STATS_JSON is written by rank 0 at finalize: check at start, on rank
// 0's file system, that it can be, and fail on every rank if not rather than
// lose the statistics after the whole run.
bool stats_json_path_usable(const std::string &path, Rank rank, MPI_Comm world, std::string *error) {
  if (path.empty()) return true;
  std::string reason;
  int usable = rank != 0 || platform::file_writable(path, &reason);
  MPI_Bcast(&usable, 1, MPI_INT, 0, world);
  if (usable) return true;
  *error = "AGORA_STATS_JSON=" + path + " cannot be written" +
           (rank == 0 ? ": " + reason : std::string(" (see rank 0)"));
  return false;
}

// Threads woken from a sleeping wait that have not run yet. Until they do,
// the service thread holds back: under sc the message after a grant is often
// the next rank's request for the same page, and serving it before the woken
// thread has made its access takes the page away again (page ping-pong
// without progress when ranks outnumber cores).
std::atomic<int> g_woken_not_resumed{0};
void wake_sleeper(std::atomic<uint32_t> *state) {
  g_woken_not_resumed.fetch_add(1);
  platform::futex_wake(state);
}
}  // namespace

Runtime *Runtime::start(int *argc, char ***argv, int *status, const std::function<void(Runtime *)> &publish) {
  auto *rt = new Runtime();
  std::string error;
  if (!rt->init(argc, argv, &error)) {
    log_error("agora_init failed: %s", error.c_str());
    *status = -6;
    return nullptr;  // the partially built runtime is left to process exit
  }
  // Published before the start-up barrier: once another rank is past it, it
  // may start threads here, and they call the API before this thread has
  // returned from the barrier.
  publish(rt);
  *status = rt->barrier() == 0 ? 0 : -6;
  return rt;
}

bool Runtime::init(int *argc, char ***argv, std::string *error) {
  // Configuration first: a bad setting must fail before MPI starts.
  if (!config_from_env(&config_, error, protocol_names())) return false;
  log_set_debug(config_.debug);
  // A doorbell signal the program chose is checked before MPI starts; the
  // default is picked after, once MPI's libraries have taken their signals.
  if (config_.doorbell_signal && !platform::doorbell_setup((int)config_.doorbell_signal, error))
    return false;
  // Threads that MPI starts are not the application's (the hang watch counts those).
  std::vector<int> threads_before = platform::thread_ids();
  if (!transport_.init(argc, argv, error)) return false;
  log_set_rank(rank());
  g_abort_transport = &transport_;
  log_set_abort_hook(abort_job);
  if (!stats_json_path_usable(config_.stats_json_path, rank(), transport_.world(), error)) return false;
  if (rank() == 0)
    for (const std::string &message : config_unknown_variables()) log_error("%s", message.c_str());
  WaitDecision waits = decide_wait_mode(config_, transport_);
  block_waits_ = waits.block;
  waiter_wake = wake_sleeper;
  log_debug("waiting threads: %s", waits.why.c_str());

  uint64_t page = platform::kPageSize;
  // Each arena gets a whole number of pages.
  uint64_t bytes = config_.memory_bytes / (page * 2 * nranks()) * (page * 2 * nranks());
  if (bytes == 0) {
    *error = "AGORA_MEMORY is too small for " + std::to_string(nranks()) + " ranks";
    return false;
  }
  if (!platform::vm_reserve(kBase, bytes, &range_, error)) {
    *error = "AGORA_MEMORY=" + platform::human_bytes(config_.memory_bytes) +
             " cannot be mapped: " + *error + "; lower AGORA_MEMORY (--memory)";
    return false;
  }
  if (!platform::vm_exclude_from_fork(range_, error)) return false;
  if (!platform::fork_child_hook_install(on_fork_child, error)) return false;
  space_.emplace(kBase, bytes, page, nranks());
  if (!observe_start(config_, rank(), nranks(), kBase, page, bytes / page, error)) return false;
  arena_.emplace(space_->arena_first_page(rank()) * page, space_->arena_pages() * page, page);
  if (rank() == 0) placed_.emplace(space_->placed_first_page(), space_->placed_capacity_pages());
  EngineOptions engine_options;
  engine_options.intervals = config_.intervals;
  engine_ = protocol_create(config_.protocol, *this, engine_options);
  // This rank's arena is homed here: open in the application view as far as
  // the protocol allows its home pages.
  platform::vm_protect((void *)space_->addr_of(space_->arena_first_page(rank())),
                       space_->arena_pages() * page, engine_->home_access());
  if (program_request() && !setup_program_windows(error)) return false;
  store_trace_set_global_memory(*space_);  // what traced stores may record

  locks_.emplace(*this);
  locks_->attach(engine_.get());
  locks_->set_signatures([this](uint64_t id) { return lock_signature(id); });
  barrier_.emplace(*this);
  barrier_->attach(engine_.get());
  barrier_->attach(&ledger_);
  reduce_.emplace(*this);
  reduce_->attach(&ledger_);
  threads_.emplace(*this, *engine_,
                   [this](uint64_t id, Payload fn, uint64_t arg) { return start_thread(id, fn, arg); });
  auto manager_of = [this](uint64_t key) { return manager_of_key(key); };
  locks_->set_managers(manager_of);
  thread_barriers_.emplace(*this, manager_of);
  thread_barriers_->attach(engine_.get());
  thread_reductions_.emplace(*this, manager_of);
  semaphores_.emplace(*this, manager_of);
  semaphores_->attach(engine_.get());
  conditions_.emplace(*this, manager_of);
  if (!config_.doorbell_signal && !platform::doorbell_setup(0, error)) return false;
  g_fault_target = this;
  on_exit(report_early_exit, nullptr);
  if (!platform::fault_handler_install(fault_trampoline, kBase, kBase + bytes)) {
    *error = "cannot install the SIGSEGV handler";
    return false;
  }
  HangWatch::Options watch_options;
  watch_options.warn_after = config_.hang_warn_s;
  watch_options.timeout = config_.hang_timeout_s;
  watch_.emplace(*this, watch_options, [this] { return hang_snapshot(); });
  platform::global_io_enable(kBase, kBase + bytes, io_range_usable);
  running_ = true;
  service_ = std::thread([this] { service_loop(); });
  exchange_doorbells();
  {
    std::vector<int> after = platform::thread_ids();
    std::sort(threads_before.begin(), threads_before.end());
    std::sort(after.begin(), after.end());
    std::set_difference(after.begin(), after.end(), threads_before.begin(), threads_before.end(),
                        std::back_inserter(internal_threads_));
  }
  bool all_rung = true;
  for (const Doorbell &d : doorbells_) all_rung &= d.pid != 0;
  every_rank_rung_ = block_waits_ && all_rung;
  log_debug("started: protocol %s, %llu bytes of global memory at %p", engine_->name(),
            (unsigned long long)bytes, (void *)kBase);
  return true;  // start() ends with the start-up barrier
}

int Runtime::stop() {
  finish_threads();  // ends with a barrier
  {
    // Nothing can hang from here on; and a watch message sent now could
    // reach a rank that has finalised MPI.
    std::lock_guard<std::mutex> g(lock_);
    watch_->stop();
  }
  // Let every reply this rank still owes leave before the service stops.
  {
    std::lock_guard<std::mutex> g(lock_);
    while (transport_.sends_pending()) poll_locked();
  }
  running_ = false;
  service_.join();
  report_doorbells();
  report_stats();
  observe_stop();  // writes the trace and profile files
  MPI_Barrier(transport_.world());
  platform::global_io_disable();
  platform::fault_handler_uninstall();
  g_fault_target = nullptr;
  transport_.finalize();
  g_abort_transport = nullptr;
  log_set_abort_hook(nullptr);
  std::string ignored;
  platform::fork_child_hook_install(nullptr, &ignored);
  platform::vm_release(&range_);
  return 0;
}

bool Runtime::in_forked_child() { return g_forked_child.load(std::memory_order_relaxed); }

void Runtime::report_stats() {
  std::vector<double> mine = stats_.to_vector();
  std::vector<double> all(rank() == 0 ? Stats::kFields * nranks() : 0);
  MPI_Gather(mine.data(), Stats::kFields, MPI_DOUBLE, all.data(), Stats::kFields, MPI_DOUBLE, 0,
             transport_.world());
  if (rank() != 0) return;
  std::vector<Stats> per_rank;
  for (Rank r = 0; r < nranks(); ++r) per_rank.push_back(Stats::from_vector(&all[r * Stats::kFields]));
  if (config_.print_stats) {
    std::string table = stats_report_table(per_rank, config_.protocol);
    std::fputs(table.c_str(), stderr);
  }
  if (!config_.stats_json_path.empty()) {
    std::ofstream out(config_.stats_json_path);
    out << stats_report_json(per_rank, config_.protocol);
    if (!out) log_error("cannot write AGORA_STATS_JSON=%s", config_.stats_json_path.c_str());
  }
}

// ---- EngineHost -------------------------------------------------------------

void Runtime::send(Rank dst, MsgHeader header, Payload payload) {
  header.src = rank();
  ObservedMessage observed(true, dst, header, payload);
  stats_.messages_sent++;  // the hang watch's count too (watch messages go by send_control)
  stats_.bytes_sent += transport_.send(dst, header, payload);
  // AGORA_WAIT=block: dst's waiting threads sleep rather than poll, so every
  // message, replies and messages to this rank included, wakes its service.
  if (block_waits_ && dst < (Rank)doorbells_.size() && doorbells_[dst].pid) ring(doorbells_[dst]);
}

void Runtime::ring(Doorbell &d) {
  d.rings++;
  platform::doorbell_ring(d.pid, d.tid, d.signo);
}

void Runtime::send_request(Rank dst, MsgHeader header, Payload payload) {
  send(dst, header, payload);
  if (block_waits_) return;  // send() rang already
  Doorbell &d = doorbells_[dst];
  if (!d.pid || dst == rank() || config_.service != ServiceMode::Adaptive) return;
  double now = platform::now_seconds();
  if (now - d.last_ring < 20e-6) return;
  d.last_ring = now;
  ring(d);
}

void Runtime::send_control(Rank dst, MsgHeader header, Payload payload) {
  header.src = rank();
  ObservedMessage observed(true, dst, header, payload);
  transport_.send(dst, header, payload);
}

void Runtime::exchange_doorbells() {
  while (service_tid_.load() == 0) platform::cpu_relax();
  // (PID namespace, pid, tid, signal) of every rank. A rank is rung only if
  // MPI puts it on this node and its pid means the same process here.
  long long mine[4] = {(long long)platform::pid_namespace_id(), platform::process_id(),
                       service_tid_.load(), platform::doorbell_signal()};
  std::vector<long long> all(4 * nranks());
  {
    std::lock_guard<std::mutex> g(lock_);  // MPI is serialised under the lock
    MPI_Allgather(mine, 4, MPI_LONG_LONG, all.data(), 4, MPI_LONG_LONG, transport_.world());
  }
  doorbells_.assign(nranks(), Doorbell{});
  std::string rung, node;
  for (Rank r = 0; r < nranks(); ++r) {
    const long long *theirs = &all[4 * r];
    if (transport_.same_node(r)) node.append(" ").append(std::to_string(r));
    if (r == rank() || !transport_.same_node(r) || mine[0] == 0 || theirs[0] != mine[0]) continue;
    doorbells_[r] = {(int)theirs[1], (int)theirs[2], (int)theirs[3]};
    rung.append(" ").append(std::to_string(r));
  }
  log_debug("doorbell: signal %d, same node [%s ], rings [%s ] (same node and PID namespace)",
            platform::doorbell_signal(), node.c_str(), rung.c_str());
}

void Runtime::report_doorbells() {
  if (!log_debug_enabled()) return;
  std::string counts;
  for (Rank r = 0; r < nranks(); ++r)
    if (r != rank())
      counts.append(" ").append(std::to_string(r)).append(":").append(std::to_string(doorbells_[r].rings));
  log_debug("doorbell: rings sent to rank:count [%s ]; application signals handed back %llu",
            counts.c_str(), (unsigned long long)platform::doorbell_signals_handed_back());
}

void Runtime::set_access(PageId page, Access access) {
  observe_access(page, access);
  if (!platform::vm_protect((void *)space_->addr_of(page), page_size(), access))
    fatal("mprotect of page %p to %s failed: %s (too many distinct mappings? raise "
          "vm.max_map_count)",
          (void *)space_->addr_of(page), access_name(access), std::strerror(errno));
}

std::byte *Runtime::frame(PageId page) { return range_.service_view + page * page_size(); }

bool Runtime::page_allocated(PageId page) const {
  if (space_->windows().contains_page(page)) return true;
  if (page < space_->collective_capacity_pages()) return page < space_->collective_pages_used();
  if (space_->in_placed_region(page)) {
    CollectiveRun run;
    return space_->placed_find(page, &run);
  }
  return arena_->page_live(page - space_->arena_first_page(rank()));
}

// ---- message loop -------------------------------------------------------------

int Runtime::poll_locked(int budget) {
  return transport_.poll([this](const MsgHeader &m, Payload p) { dispatch(m, p); }, budget);
}

void Runtime::dispatch(const MsgHeader &m, Payload p) {
  ObservedMessage observed(false, m.src, m, p);
  if (m.channel != Channel::Watch) messages_in_++;
  switch (m.channel) {
    case Channel::Protocol: engine_->on_message(m, p); break;
    case Channel::Lock: locks_->on_message(m, p); break;
    case Channel::Barrier: barrier_->on_message(m, p); break;
    case Channel::Reduce: reduce_->on_message(m, p); break;
    case Channel::Memory: on_memory_message(m, p); break;
    case Channel::Thread: threads_->on_message(m, p); break;
    case Channel::Watch: watch_->on_message(m, p); break;
    case Channel::ThreadBarrier: thread_barriers_->on_message(m, p); break;
    case Channel::ThreadReduce: thread_reductions_->on_message(m, p); break;
    case Channel::Semaphore: semaphores_->on_message(m, p); break;
    case Channel::Condition: conditions_->on_message(m, p); break;
    default: fatal("message with unknown channel %u from rank %d", (unsigned)m.channel, m.src);
  }
}

void Runtime::wait(Waiter &w, bool patient) {
  // Completed by whoever polls (the service thread at least); the thread
  // woken counts as not resumed until it is back here (see service_loop).
  auto sleep_until_done = [&w] {
    if (w.sleep_until_done(platform::futex_wait)) g_woken_not_resumed.fetch_sub(1);
  };
  if (block_waits_) {
    // Sleep at once and leave the core, and the MPI polling, to the threads
    // that have to answer (polling a few times first was slower: lockstress,
    // 8 ranks on 2 cores, docs/service.md).
    if (!w.done()) sleep_until_done();
    return;
  }
  waiting_threads_.fetch_add(1);
  unsigned idle = 0;
  double idle_since = 0;
  bool sleep = false;
  while (!w.done()) {
    int got = 0;
    if (lock_.try_lock()) {
      // One message at a time, and back to the access once w is done: the
      // message after a page grant is often the next rank's request for the
      // same page (under sc: an invalidation), and serving it first takes
      // the page away before this thread used it. With ranks outnumbering
      // cores that became a ping-pong without progress (docs/service.md).
      got = poll_locked(1);
      lock_.unlock();
    }
    if (got) {
      idle = 0;
    } else if (++idle > 256) {
      if (idle == 257) idle_since = platform::now_seconds();
      if (patient && (idle & 63) == 0 && platform::now_seconds() - idle_since > 2e-3) {
        // Idle for 2 ms: the wait may be long (a join of a computing
        // thread); the service thread takes over the messages.
        sleep = true;
        break;
      }
      // Nothing to do for a while: another rank may need this core
      // (oversubscribed runs), so give it up briefly.
      platform::thread_yield();
    } else {
      platform::cpu_relax();
    }
  }
  waiting_threads_.fetch_sub(1);
  if (sleep) sleep_until_done();
}

void Runtime::service_loop() {
  platform::thread_reduce_timer_slack();
  platform::doorbell_block();
  service_tid_.store(platform::thread_id());
  observe_name_thread("agora service");
  uint32_t nap_us = 1;
  while (running_.load(std::memory_order_relaxed)) {
    hang_tick();
    if (!block_waits_ && waiting_threads_.load(std::memory_order_relaxed) > 0) {
      // A waiting application thread polls for this rank; keep off its core.
      platform::sleep_us(config_.service_sleep_us);
      continue;
    }
    if (block_waits_) {
      // Let threads just woken make the access they waited for (bounded: a
      // thread the scheduler keeps off the cores must not stop the service).
      for (int i = 0; i < 100 && g_woken_not_resumed.load(std::memory_order_relaxed) > 0; ++i)
        platform::sleep_us(10);
    }
    int got = 0;
    if (block_waits_) {
      // Nobody else polls: wait for the lock (held briefly by a thread
      // starting an operation) rather than skip the round. Probe twice
      // before sleeping: Open MPI's MPI_Iprobe (ob1) matches before it
      // progresses, so a message that arrived with the ring is only seen by
      // the second probe. One message per round, so that the hold above
      // comes between a grant and the next message.
      std::lock_guard<std::mutex> g(lock_);
      got = poll_locked(1);
      if (!got) got = poll_locked(1);
    } else if (lock_.try_lock()) {
      got = poll_locked();
      lock_.unlock();
    }
    if (got) {
      observe_service_served(got);
      nap_us = 1;  // busy: come straight back
      continue;
    }
    if (config_.service == ServiceMode::Poll) {
      platform::cpu_relax();
      continue;
    }
    if (every_rank_rung_) {
      // Every message to this rank rings: sleep until one does (a ring
      // during the poll above stays pending and ends the wait at once).
      observe_service_nap(config_.service_sleep_us, platform::doorbell_wait(config_.service_sleep_us));
      continue;
    }
    // Idle: nap, longer each time, so a computing thread on this core loses
    // little; the first naps after activity are short, for bursts.
    if (observe_service_nap(nap_us, platform::doorbell_wait(nap_us))) nap_us = 1;  // rung: a request is on its way
    else nap_us = std::min(nap_us * 2, config_.service_sleep_us);
  }
}

// ---- hang watch -------------------------------------------------------------------

void Runtime::hang_tick() {
  double now = platform::now_seconds();
  if (now < next_watch_tick_ || !lock_.try_lock()) return;  // not yet, or next time round
  next_watch_tick_ = now + 0.1;
  watch_->tick(now);
  lock_.unlock();
}

void Runtime::wait_begin(WaitNote *note, const Waiter *waiter) {
  note->since = last_inside_ = platform::now_seconds();
  note->waiter = waiter;
  waits_.push_back(note);
}

void Runtime::wait_end(WaitNote *note) {
  last_inside_ = platform::now_seconds();
  waits_.erase(std::find(waits_.begin(), waits_.end(), note));
}

std::string Runtime::describe_wait(const WaitNote &n) const {
  char line[256];
  switch (n.kind) {
    case WaitKind::Fault:
      std::snprintf(line, sizeof line, "a page fault at %p (its home is rank %d)", (void *)n.a, (int)n.b);
      break;
    case WaitKind::Lock:
      if (space_->contains(n.a))
        std::snprintf(line, sizeof line, "agora_lock(lock at %p), managed by rank %d", (void *)n.a,
                      locks_->manager_of(n.a));
      else
        std::snprintf(line, sizeof line, "agora_lock(lock %llu), managed by rank %d", (unsigned long long)n.a,
                      locks_->manager_of(n.a));
      break;
    case WaitKind::ThreadBarrier:
      std::snprintf(line, sizeof line, "agora_thread_barrier_wait(barrier at %p, count %llu), managed by rank %d",
                    (void *)n.a, (unsigned long long)n.b, manager_of_key(n.a));
      break;
    case WaitKind::ThreadReduce:
      std::snprintf(line, sizeof line, "agora_thread_reduce(reduction at %p, %llu elements), managed by rank %d",
                    (void *)n.a, (unsigned long long)n.b, manager_of_key(n.a));
      break;
    case WaitKind::Condition:
      std::snprintf(line, sizeof line, "agora_cond_wait(condition variable at %p), managed by rank %d",
                    (void *)n.a, manager_of_key(n.a));
      break;
    case WaitKind::Semaphore:
      std::snprintf(line, sizeof line, "agora_sem_wait(semaphore at %p), managed by rank %d", (void *)n.a,
                    manager_of_key(n.a));
      break;
    case WaitKind::Collective: {
      CollectiveKind kind = CollectiveLedger::kind_of(n.a);
      int len = std::snprintf(line, sizeof line, "%s (collective call #%llu)", collective_name(kind),
                              (unsigned long long)CollectiveLedger::sequence_of(n.a));
      if (n.b == 0 && barrier_->waiting())
        std::snprintf(line + len, sizeof line - len, ", waiting for rank %d's barrier signal",
                      barrier_->awaited_rank());
      else if (n.b == 1)
        std::snprintf(line + len, sizeof line - len, ", %s", rank() == 0 ? "waiting for every rank's contribution"
                                                                         : "waiting for rank 0's result");
      break;
    }
    case WaitKind::Free:
      std::snprintf(line, sizeof line, "agora_free of a block of rank %d", (int)n.a);
      break;
    case WaitKind::ThreadCreate:
      std::snprintf(line, sizeof line, "agora_thread_create on rank %d", (int)n.a);
      break;
    case WaitKind::ThreadJoin:
      std::snprintf(line, sizeof line, "agora_thread_join of thread (rank %d, id %llu)", (int)n.a,
                    (unsigned long long)n.b);
      break;
    case WaitKind::Placed:
      std::snprintf(line, sizeof line, "%s, waiting for rank 0 (which places every such allocation "
                    "and free, with every rank's acknowledgement)",
                    n.a ? "agora_free of a placed allocation" : "agora_malloc_placed");
      break;
    case WaitKind::FinalizeThreads:
      std::snprintf(line, sizeof line, "agora_finalize, waiting for this rank's %zu agora threads to return",
                    threads_->running());
      break;
  }
  return line;
}

RankState Runtime::hang_snapshot() {
  double now = platform::now_seconds();
  RankState s;
  // Application threads: every thread but MPI's and the service thread.
  size_t app = 0;
  for (int tid : platform::thread_ids())
    app += !std::binary_search(internal_threads_.begin(), internal_threads_.end(), tid);
  size_t blocked = 0;
  for (const WaitNote *n : waits_) {
    blocked += n->waiter ? !n->waiter->done() : threads_->running() > 0;
    s.waits += describe_wait(*n) + "\n";
    // A rank idling in finalize (the fork-join model's workers) waits for
    // nobody in particular: not a wait to warn about.
    bool finalizing = n->kind == WaitKind::FinalizeThreads ||
                      (n->kind == WaitKind::Collective &&
                       CollectiveLedger::kind_of(n->a) == CollectiveKind::Finalize);
    if (!finalizing) s.waited_s = std::max(s.waited_s, now - n->since);
  }
  s.blocked = blocked > 0 && blocked >= app;
  s.waits += locks_->describe_contention();
  s.waits += thread_barriers_->describe_contention();
  s.waits += thread_reductions_->describe_contention();
  s.waits += semaphores_->describe_contention();
  s.waits += conditions_->describe_contention();
  s.outside_s = waits_.empty() ? now - last_inside_ : 0;
  s.sent = stats_.messages_sent;
  s.received = messages_in_;
  return s;
}

// ---- access faults --------------------------------------------------------------

bool Runtime::handle_fault(void *addr, bool is_write) {
  if (!space_->maybe_allocated((uintptr_t)addr)) return false;  // not ours: crash as usual
  if (program_mode_ && stack_guard_fault(addr)) return false;
  PageId page = space_->page_of((uintptr_t)addr);
  ObservedFault observed(page, space_->home_of(page), addr, is_write);
  Waiter w;
  WaitNote note{WaitKind::Fault, (uint64_t)(uintptr_t)addr, (uint64_t)space_->home_of(page)};
  noted_wait(note, w, [&] {
    (is_write ? stats_.write_faults : stats_.read_faults)++;
    engine_->on_fault(page, is_write ? Access::Write : Access::Read, &w);
    return 0;
  }, false, &stats_.fault_time_s);
  if (w.status != 0)
    fatal("%s of %p: no live allocation there (freed, or never allocated by rank %d)",
          is_write ? "write" : "read", addr, space_->home_of(page));
  return true;
}

// ---- allocation -------------------------------------------------------------------

void *Runtime::alloc_collective(uint64_t bytes, Placement placement, Rank on_rank) {
  PageId first = 0, count = 0;
  bool ok;
  {
    std::lock_guard<std::mutex> g(lock_);
    ok = space_->collective_reserve(bytes, placement, on_rank, &first, &count);
    // Open this rank's home pages before any rank can use them.
    if (ok) open_home_pages(space_->collective_run(first, count), "agora_alloc", bytes);
  }
  // Every rank must have asked for the same thing; this also keeps any rank
  // from touching the memory before its homes have opened their pages. The
  // size travels as two 32-bit halves: max(x) == -max(-x) holds only while
  // -x cannot overflow.
  int64_t hi = (int64_t)(bytes >> 32), lo = (int64_t)(bytes & 0xffffffffu);
  int64_t v[10] = {hi, lo, (int64_t)placement, on_rank, ok, -hi, -lo, -(int64_t)placement, -on_rank,
                   -(int64_t)ok};
  std::vector<int64_t> check(v, v + 10);
  reduce(check.data(), 10, ReduceType::Int64, ReduceOp::Max, CollectiveKind::Alloc);
  bool same_bytes = check[0] == -check[5] && check[1] == -check[6];
  if (!same_bytes || check[2] != -check[7] || check[3] != -check[8])
    fatal("agora_alloc is collective: ranks called it with different arguments (bytes %s, "
          "%llu here; placement %lld..%lld; rank %lld..%lld)",
          same_bytes ? "equal" : "differ", (unsigned long long)bytes, (long long)-check[7],
          (long long)check[2], (long long)-check[8], (long long)check[3]);
  if (check[4] != -check[9])
    fatal("agora_alloc(%llu bytes): succeeded on some ranks only (out of memory for its records?)",
          (unsigned long long)bytes);
  if (!ok) {
    if (rank() == 0) {
      uint64_t page = page_size();
      uint64_t capacity = space_->collective_capacity_pages() * page;
      uint64_t free_bytes = capacity - space_->collective_pages_used() * page;
      if (bytes > capacity)
        log_error("agora_alloc(%llu bytes): larger than the whole collective region (%llu bytes, "
                  "a quarter of AGORA_MEMORY=%llu); %llu bytes are free",
                  (unsigned long long)bytes, (unsigned long long)capacity,
                  (unsigned long long)space_->size(), (unsigned long long)free_bytes);
      else
        log_error("agora_alloc(%llu bytes): collective global memory exhausted (%llu bytes free of "
                  "%llu); raise AGORA_MEMORY",
                  (unsigned long long)bytes, (unsigned long long)free_bytes,
                  (unsigned long long)capacity);
    }
    return nullptr;
  }
  return observe_allocation(AllocKind::Collective, (void *)space_->addr_of(first), bytes, placement, on_rank);
}

void *Runtime::malloc_local(uint64_t bytes) {
  std::lock_guard<std::mutex> g(lock_);
  uint64_t off = arena_->allocate(bytes);
  if (off == UINT64_MAX) {
    uint64_t heap = space_->arena_pages() * page_size();
    if (bytes > heap)
      log_error("agora_malloc(%llu bytes): larger than this rank's whole global heap (%llu bytes: "
                "half of AGORA_MEMORY over %d ranks); %llu bytes are free",
                (unsigned long long)bytes, (unsigned long long)heap, nranks(),
                (unsigned long long)arena_->bytes_free());
    else
      log_error("agora_malloc(%llu bytes): this rank's global heap is exhausted (%llu bytes free "
                "of %llu, possibly fragmented); raise AGORA_MEMORY",
                (unsigned long long)bytes, (unsigned long long)arena_->bytes_free(),
                (unsigned long long)heap);
    return nullptr;
  }
  return observe_allocation(AllocKind::Local, (void *)(space_->base() + off), bytes);
}

int Runtime::free_local(uint64_t offset) {
  switch (arena_->release(offset)) {
    case ArenaAllocator::FreeResult::Ok: return 0;
    case ArenaAllocator::FreeResult::InsideBlock:
      log_error("agora_free(%p): not the start of an allocation", (void *)(space_->base() + offset));
      return -5;
    default:
      log_error("agora_free(%p): not allocated (double free?)", (void *)(space_->base() + offset));
      return -5;
  }
}

int Runtime::free_any(void *ptr) {
  uintptr_t addr = (uintptr_t)ptr;
  if (!ptr) return 0;
  if (!space_->contains(addr)) {
    log_error("agora_free(%p): not global memory (use free() for malloc'd memory)", ptr);
    return -5;
  }
  if (space_->in_placed_region(space_->page_of(addr))) return free_placed(addr);
  Rank owner = space_->arena_owner(addr);
  if (owner < 0) {
    log_error("agora_free(%p): inside a collective allocation; those live until agora_finalize", ptr);
    return -5;
  }
  uint64_t offset = addr - space_->base();
  if (owner == rank()) {
    std::lock_guard<std::mutex> g(lock_);
    return free_local(offset);
  }
  Waiter w;
  WaitNote note{WaitKind::Free, (uint64_t)owner};
  // The free is a release to the owner: under hlrc this rank's writes to the
  // block (a header, the data) still wait here as twins, and a diff arriving
  // after the owner has handed the memory out again would overwrite the new
  // block. So they reach the home first.
  return noted_wait(note, w, [&] {
    engine_->release([this, owner, offset, waiter = &w] {
      send_request(owner, {Channel::Memory, kFreeRequest, 0, offset, (uint64_t)(uintptr_t)waiter, 0});
    });
    return 0;
  });
}

void Runtime::on_memory_message(const MsgHeader &m, Payload p) {
  if (m.op > kFreeReply) {
    on_placed_message(m, p);
  } else if (m.op == kFreeRequest) {
    int status = free_local(m.a);
    send(m.src, {Channel::Memory, kFreeReply, 0, m.a, m.b, (uint64_t)(int64_t)status});
  } else {
    reinterpret_cast<Waiter *>(m.b)->complete((int)(int64_t)m.c);
  }
}

void Runtime::open_home_pages(const CollectiveRun &run, const char *what, uint64_t bytes) {
  for_each_run_home_pages(run, rank(), nranks(), [&](PageId first, PageId pages) {
    if (!platform::vm_protect((void *)space_->addr_of(first), pages * page_size(), engine_->home_access()))
      fatal("%s(%llu bytes): mprotect of its home pages failed: %s (too many distinct mappings? "
            "raise vm.max_map_count, or use AGORA_PLACE_BLOCK)",
            what, (unsigned long long)bytes, std::strerror(errno));
  });
}

// ---- synchronisation -------------------------------------------------------------

namespace {
uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t Runtime::lock_signature(uint64_t id) const {
  auto after = std::upper_bound(lock_creations_.begin(), lock_creations_.end(), id,
                                [](uint64_t v, const LockCreation &c) { return v < c.first; });
  if (after == lock_creations_.begin()) return 0;
  const LockCreation &c = *std::prev(after);
  if (id >= c.first + c.count) return 0;
  return mix64(c.signature + (id - c.first)) | 1;
}

uint64_t Runtime::create_locks(uint64_t count, uint64_t call_site) {
  std::lock_guard<std::mutex> g(lock_);
  if (tl_thread_id != 0) {
    // An agora thread creates locks alone (no other rank calls with it):
    // ids of this rank's own, clear of the collective ones.
    uint64_t first = (1ull << 62) | ((uint64_t)rank() << 40) | next_thread_lock_id_;
    next_thread_lock_id_ += count;
    return first;
  }
  if (next_lock_id_ + count > kBase) {
    // Ids from kBase up are the addresses of address-named locks.
    log_error("agora_lock_array_create(%llu): too many locks created collectively (at most 2^45 in all)",
              (unsigned long long)count);
    return UINT64_MAX;
  }
  uint64_t first = next_lock_id_;
  next_lock_id_ += count;
  // The signature: the creating call (site, how many creations before it, size).
  uint64_t signature = mix64(call_site ^ mix64(lock_creations_.size() + 1) ^ mix64(count << 1));
  lock_creations_.push_back({first, count, signature});
  return first;
}

int Runtime::noted_wait(WaitNote &note, Waiter &w, const std::function<int()> &start, bool patient,
                        double *time_sum) {
  double t0 = platform::now_seconds();
  {
    std::lock_guard<std::mutex> g(lock_);
    if (int status = start()) return status;
    wait_begin(&note, &w);
  }
  wait(w, patient);
  std::lock_guard<std::mutex> g(lock_);
  wait_end(&note);
  if (time_sum) *time_sum += platform::now_seconds() - t0;
  return w.status;
}

int Runtime::timed_sync(WaitNote &note, const std::function<int(Waiter *)> &start, bool patient) {
  Waiter w;
  return noted_wait(note, w, [&] { return start(&w); }, patient, &stats_.sync_time_s);
}

int Runtime::lock(uint64_t id) {
  ObservedSpan observed(TraceKind::LockWait, id);
  WaitNote note{WaitKind::Lock, id};
  int status = timed_sync(note, [&](Waiter *w) { return locks_->acquire(id, this_thread_token(), w); });
  if (status == 0 && store_trace_active()) store_trace_span_enter();
  if (status == -8)
    log_error("agora_lock: this thread already holds lock %llu (locks are not recursive; waiting "
              "would never end)",
              (unsigned long long)id);
  return status;
}

int Runtime::trylock(uint64_t id) {
  ObservedSpan observed(TraceKind::LockWait, id);
  WaitNote note{WaitKind::Lock, id};
  int status = timed_sync(note, [&](Waiter *w) { return locks_->acquire(id, this_thread_token(), w, true); });
  if (status == 0 && store_trace_active()) store_trace_span_enter();
  return status;
}

uint64_t Runtime::thread_token() { return this_thread_token(); }

uint64_t Runtime::thread_self() const {
  uint64_t high = (uint64_t)(rank() + 1) << 48;
  return tl_thread_id ? high | tl_thread_id : high | (1ull << 47) | this_thread_token();
}

int Runtime::unlock(uint64_t id) {
  // A program built with store tracing says exactly what the thread stored
  // in the span (regc sends those bytes; other protocols ignore them).
  std::vector<StoreRange> stores;
  bool traced = false;
  if (store_trace_active()) {
    std::lock_guard<std::mutex> g(lock_);
    if (locks_->holds(id, this_thread_token())) {
      std::vector<TracedRange> ranges;
      traced = store_trace_span_exit(&ranges) &&
               store_ranges_to_pages(ranges, page_size(), [this](uintptr_t a) { return space_->page_of(a); },
                                     &stores);
    }
  }
  std::lock_guard<std::mutex> g(lock_);
  int status = locks_->release(id, this_thread_token(), traced ? &stores : nullptr);
  if (status != 0) log_error("agora_unlock: lock %llu is not held by this thread", (unsigned long long)id);
  return status;
}

// A collective called from a thread that may not: an agora thread (the
// fork-join model has thread barriers instead), or a second thread of the rank.
static int collective_misuse(const char *fn, uint64_t agora_thread) {
  if (agora_thread)
    log_error("%s called from an agora thread (id %llu): collectives are for one thread per rank "
              "in the SPMD model; fork-join threads synchronise with locks, joins and thread barriers "
              "(agora_thread_barrier_wait)",
              fn, (unsigned long long)agora_thread);
  else
    log_error("%s: another thread of this rank is already in %s; call it from one thread per rank",
              fn, fn);
  return -9;
}

int Runtime::barrier(bool patient, CollectiveKind kind) {
  if (tl_thread_id != 0) return collective_misuse(collective_name(kind), tl_thread_id);
  ObservedSpan observed(TraceKind::Barrier, 0, 0, (uint64_t)(uintptr_t)collective_name(kind));
  WaitNote note{WaitKind::Collective, 0, 0};
  int status = timed_sync(note, [&](Waiter *w) {
    if (barrier_->waiting()) return -9;
    note.a = ledger_.begin(kind);
    return barrier_->arrive(w, note.a);
  }, patient);
  if (status == -9) collective_misuse(collective_name(kind), 0);
  return status;
}

int Runtime::reduce(void *buf, size_t count, ReduceType type, ReduceOp op, CollectiveKind kind) {
  const char *fn = collective_name(kind);
  if (tl_thread_id != 0) return collective_misuse(fn, tl_thread_id);
  if (count > ReduceService::kMaxCount) {
    // Returned, not fatal: if other ranks passed a valid count, the ledger
    // names the mismatch at this rank's next collective call.
    log_error("agora_reduce(count %zu): too many elements (at most %zu in one call)", count,
              ReduceService::kMaxCount);
    return -2;
  }
  // Work on a private copy: buf may itself be global memory, and touching it
  // under the lock could fault.
  std::vector<std::byte> local(count * 8);
  std::memcpy(local.data(), buf, count * 8);
  ObservedSpan observed(TraceKind::Reduce, 0, 0, (uint64_t)(uintptr_t)fn);
  WaitNote note{WaitKind::Collective, 0, 1};
  int status = timed_sync(note, [&](Waiter *w) {
    if (reduce_->waiting()) return -9;
    note.a = ledger_.begin(kind);
    return reduce_->start(local.data(), count, type, op, w, note.a);
  });
  if (status == -9) return collective_misuse(fn, 0);
  std::memcpy(buf, local.data(), count * 8);
  return status;
}

// ---- fork-join threads ----------------------------------------------------------

int Runtime::thread_create(Rank target, void *(*fn)(void *), void *arg, Rank *where, uint64_t *id) {
  // The function travels as (module, offset): ASLR loads the program at a
  // different address on every rank.
  std::string module, error;
  uint64_t offset = 0;
  if (!platform::code_ref_from_address((const void *)fn, &module, &offset, &error)) {
    log_error("agora_thread_create: the function pointer cannot be run: %s", error.c_str());
    return -2;
  }
  std::vector<std::byte> ref(sizeof offset + module.size());
  std::memcpy(ref.data(), &offset, sizeof offset);
  std::memcpy(ref.data() + sizeof offset, module.data(), module.size());
  ThreadCreateOp op;
  WaitNote note{WaitKind::ThreadCreate};
  bool placed = target < 0;
  size_t live = 0;
  int refused = noted_wait(note, op.w, [&] {
    if (placed) {
      live = placed_live_.size();
      if (live >= (size_t)thread_slots()) return -9;
      // In program mode main holds rank 0's first slot (SPLASH codes run the
      // worker in main too): the first thread goes to the next slot.
      uint64_t slot = threads_placed_++ + (program_mode_ && rank() == 0 ? 1 : 0);
      target = (Rank)((slot / config_.threads_per_rank) % nranks());
    }
    note.a = (uint64_t)target;
    threads_->create(target, {ref.data(), ref.size()}, (uint64_t)(uintptr_t)arg, &op);
    return 0;
  });
  if (refused) {
    log_error("agora_thread_create: this rank already has %zu threads it placed and has not joined, "
              "as many as there are slots (%d ranks x %d threads per rank); join some first, or "
              "raise the slots with --threads-per-rank / AGORA_THREADS_PER_RANK or more ranks",
              live, nranks(), (int)config_.threads_per_rank);
    return refused;
  }
  if (op.w.status != 0) {
    log_error("agora_thread_create: rank %d could not start the thread (see its message)", target);
    return op.w.status;
  }
  *where = target;
  *id = op.id;
  if (placed) {
    std::lock_guard<std::mutex> g(lock_);
    placed_live_.insert({target, op.id});
  }
  return 0;
}

int Runtime::start_thread(uint64_t id, Payload fn, uint64_t arg) {
  uint64_t offset = 0;
  std::memcpy(&offset, fn.data, sizeof offset);
  std::string module((const char *)fn.data + sizeof offset, fn.size - sizeof offset), error;
  void *code = platform::code_ref_to_address(module, offset, &error);
  if (!code) {
    log_error("agora_thread_create: cannot find the thread's function on this rank: %s",
              error.c_str());
    return -2;
  }
  os_threads_.fetch_add(1);
  try {
    std::thread([this, id, code, arg] {
      run_thread(id, (void *(*)(void *))code, (void *)(uintptr_t)arg);
    }).detach();
  } catch (const std::system_error &e) {
    os_threads_.fetch_sub(1);
    log_error("agora_thread_create: cannot start an OS thread on this rank: %s", e.what());
    return -3;
  }
  return 0;
}

void Runtime::run_thread(uint64_t id, void *(*fn)(void *), void *arg) {
  platform::fault_signal_unblock();
  tl_thread_rank = rank();
  tl_thread_id = id;
  observe_name_thread("agora thread", (int64_t)id);
  bool exited = false;
  void *ret = run_body(fn, arg, "agora thread " + std::to_string(id) + " on rank " + std::to_string(rank()),
                       &exited);
  {
    std::lock_guard<std::mutex> g(lock_);
    threads_->exited(id, (uint64_t)(uintptr_t)ret);
  }
  os_threads_.fetch_sub(1, std::memory_order_release);
}

int Runtime::thread_join(Rank where, uint64_t id, void **ret) {
  if (id != 0 && where == tl_thread_rank && id == tl_thread_id) {
    log_error("agora_thread_join: a thread cannot join itself (rank %d, id %llu)", where,
              (unsigned long long)id);
    return -2;
  }
  ThreadJoinOp op;
  WaitNote note{WaitKind::ThreadJoin, (uint64_t)where, id};
  noted_wait(note, op.w, [&] {
    threads_->join(where, id, &op);
    return 0;
  }, true);
  if (op.w.status != 0) {
    const char *why = op.error == JoinError::AlreadyJoined ? "was already joined"
                      : op.error == JoinError::BeingJoined ? "is already being joined by another thread"
                                                           : "was never created";
    log_error("agora_thread_join: thread (rank %d, id %llu) %s", where, (unsigned long long)id, why);
    return op.w.status;
  }
  if (ret) *ret = (void *)(uintptr_t)op.ret;
  {
    std::lock_guard<std::mutex> g(lock_);
    placed_live_.erase({where, id});  // its slot is free again
  }
  return 0;
}

void Runtime::finish_threads() {
  // In the fork-join model the other ranks reach finalize at once and run
  // here the threads the main rank places on them, so finalize must wait
  // until no agora thread runs, or can still be created, on any rank. Counts
  // only grow: two rounds with the same totals mean no rank did anything in
  // between, and then created == ended means no thread is left.
  int64_t last[2] = {0, 0};  // before the first round nothing had happened
  {
    std::lock_guard<std::mutex> g(lock_);
    main_finalizing_ = true;
  }
  for (;;) {
    WaitNote note{WaitKind::FinalizeThreads};
    bool noted = false;  // for the hang watch, while this rank's threads run
    for (;;) {
      {
        std::lock_guard<std::mutex> g(lock_);
        if (threads_->running() == 0) {
          if (noted) wait_end(&note);
          break;
        }
        if (!noted) wait_begin(&note, nullptr);
        noted = true;
      }
      platform::sleep_us(100);  // the service thread serves meanwhile
    }
    barrier(true, CollectiveKind::Finalize);
    int64_t now[2];
    {
      std::lock_guard<std::mutex> g(lock_);
      now[0] = (int64_t)threads_->created();
      now[1] = (int64_t)threads_->ended();
    }
    reduce(now, 2, ReduceType::Int64, ReduceOp::Sum, CollectiveKind::Finalize);
    if (now[0] == last[0] && now[1] == last[1] && now[0] == now[1]) break;
    last[0] = now[0];
    last[1] = now[1];
  }
  // Threads that have ended may still be returning from run_thread.
  while (os_threads_.load(std::memory_order_acquire) > 0) platform::thread_yield();
}

}  // namespace agora
