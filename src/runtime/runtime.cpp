#include "runtime/runtime.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <system_error>

#include "common/log.h"
#include "runtime/oversubscription.h"

namespace agora {

namespace {
Runtime *g_fault_target = nullptr;

bool fault_trampoline(void *addr, bool is_write) {
  return g_fault_target && g_fault_target->handle_fault(addr, is_write);
}

// Locks are held by threads; this names the calling thread within the rank.
uint64_t this_thread_token() {
  static std::atomic<uint64_t> next{1};
  thread_local uint64_t token = next.fetch_add(1);
  return token;
}

MpiTransport *g_abort_transport = nullptr;

// A rank that exits while the runtime is live leaves its peers waiting on it;
// say which rank left and how, before mpirun ends the job.
void report_early_exit(int status, void *) {
  if (g_fault_target) log_error("exit(%d) called before agora_finalize; the job ends", status);
}
void abort_job(int status) {
  if (g_abort_transport) g_abort_transport->abort(status);
}

enum MemoryOp : uint16_t { kFreeRequest = 1, kFreeReply = 2 };

// The agora thread running on this OS thread (id 0: not one, e.g. main), so
// that a thread joining itself is an error rather than a hang.
thread_local Rank tl_thread_rank = -1;
thread_local uint64_t tl_thread_id = 0;

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

Runtime *Runtime::start(int *argc, char ***argv, int *status) {
  auto *rt = new Runtime();
  std::string error;
  if (!rt->init(argc, argv, &error)) {
    log_error("agora_init failed: %s", error.c_str());
    *status = -6;
    return nullptr;  // the partially built runtime is left to process exit
  }
  *status = 0;
  return rt;
}

bool Runtime::init(int *argc, char ***argv, std::string *error) {
  // Configuration first: a bad setting must fail before MPI starts.
  if (!config_from_env(&config_, error, protocol_names())) return false;
  log_set_debug(config_.debug);
  if (!transport_.init(argc, argv, error)) return false;
  log_set_rank(rank());
  g_abort_transport = &transport_;
  log_set_abort_hook(abort_job);
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
  if (!platform::vm_reserve(kBase, bytes, &range_, error)) return false;
  space_.emplace(kBase, bytes, page, nranks());
  arena_.emplace(space_->arena_first_page(rank()) * page, space_->arena_pages() * page, page);
  EngineOptions engine_options;
  engine_options.intervals = config_.intervals;
  engine_ = protocol_create(config_.protocol, *this, engine_options);
  // This rank's arena is homed here: open in the application view as far as
  // the protocol allows its home pages.
  platform::vm_protect((void *)space_->addr_of(space_->arena_first_page(rank())),
                       space_->arena_pages() * page, engine_->home_access());

  locks_.emplace(*this);
  locks_->attach(engine_.get());
  barrier_.emplace(*this);
  barrier_->attach(engine_.get());
  reduce_.emplace(*this);
  threads_.emplace(*this, *engine_,
                   [this](uint64_t id, Payload fn, uint64_t arg) { return start_thread(id, fn, arg); });
  g_fault_target = this;
  on_exit(report_early_exit, nullptr);
  if (!platform::fault_handler_install(fault_trampoline, kBase, kBase + bytes)) {
    *error = "cannot install the SIGSEGV handler";
    return false;
  }
  running_ = true;
  service_ = std::thread([this] { service_loop(); });
  exchange_doorbells();
  bool all_rung = true;
  for (const Doorbell &d : doorbells_) all_rung &= d.pid != 0;
  every_rank_rung_ = block_waits_ && all_rung;
  log_debug("started: protocol %s, %llu bytes of global memory at %p", engine_->name(),
            (unsigned long long)bytes, (void *)kBase);
  return barrier() == 0;
}

int Runtime::stop() {
  finish_threads();  // ends with a barrier
  // Let every reply this rank still owes leave before the service stops.
  {
    std::lock_guard<std::mutex> g(lock_);
    while (transport_.sends_pending()) poll_locked();
  }
  running_ = false;
  service_.join();
  report_stats();
  MPI_Barrier(transport_.world());
  platform::fault_handler_uninstall();
  g_fault_target = nullptr;
  transport_.finalize();
  g_abort_transport = nullptr;
  log_set_abort_hook(nullptr);
  platform::vm_release(&range_);
  return 0;
}

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
  stats_.messages_sent++;
  stats_.bytes_sent += transport_.send(dst, header, payload);
  // AGORA_WAIT=block: dst's waiting threads sleep rather than poll, so every
  // message, replies and messages to this rank included, wakes its service.
  if (block_waits_ && dst < (Rank)doorbells_.size() && doorbells_[dst].pid)
    platform::doorbell_ring(doorbells_[dst].pid, doorbells_[dst].tid);
}

void Runtime::send_request(Rank dst, MsgHeader header, Payload payload) {
  send(dst, header, payload);
  if (block_waits_) return;  // send() rang already
  Doorbell &d = doorbells_[dst];
  if (!d.pid || dst == rank() || config_.service != ServiceMode::Adaptive) return;
  double now = platform::now_seconds();
  if (now - d.last_ring < 20e-6) return;
  d.last_ring = now;
  platform::doorbell_ring(d.pid, d.tid);
}

void Runtime::exchange_doorbells() {
  while (service_tid_.load() == 0) platform::cpu_relax();
  // (host hash, pid, tid) of every rank; ranks on other hosts are not rung.
  std::string host = platform::host_name();
  long long mine[3] = {(long long)std::hash<std::string>{}(host), platform::process_id(),
                       service_tid_.load()};
  std::vector<long long> all(3 * nranks());
  {
    std::lock_guard<std::mutex> g(lock_);  // MPI is serialised under the lock
    MPI_Allgather(mine, 3, MPI_LONG_LONG, all.data(), 3, MPI_LONG_LONG, transport_.world());
  }
  doorbells_.assign(nranks(), Doorbell{});
  for (Rank r = 0; r < nranks(); ++r)
    if (all[3 * r] == mine[0]) doorbells_[r] = {(int)all[3 * r + 1], (int)all[3 * r + 2]};
}

void Runtime::set_access(PageId page, Access access) {
  if (!platform::vm_protect((void *)space_->addr_of(page), page_size(), access))
    fatal("mprotect of page %p to %s failed: %s (too many distinct mappings? raise "
          "vm.max_map_count)",
          (void *)space_->addr_of(page), access_name(access), std::strerror(errno));
}

std::byte *Runtime::frame(PageId page) { return range_.service_view + page * page_size(); }

bool Runtime::page_allocated(PageId page) const {
  if (page < space_->collective_capacity_pages()) return page < space_->collective_pages_used();
  return arena_->page_live(page - space_->arena_first_page(rank()));
}

// ---- message loop -------------------------------------------------------------

int Runtime::poll_locked() {
  return transport_.poll([this](const MsgHeader &m, Payload p) { dispatch(m, p); });
}

void Runtime::dispatch(const MsgHeader &m, Payload p) {
  switch (m.channel) {
    case Channel::Protocol: engine_->on_message(m, p); break;
    case Channel::Lock: locks_->on_message(m, p); break;
    case Channel::Barrier: barrier_->on_message(m, p); break;
    case Channel::Reduce: reduce_->on_message(m, p); break;
    case Channel::Memory: on_memory_message(m); break;
    case Channel::Thread: threads_->on_message(m, p); break;
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
      got = transport_.poll([this](const MsgHeader &m, Payload p) { dispatch(m, p); }, 1);
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
  uint32_t nap_us = 1;
  while (running_.load(std::memory_order_relaxed)) {
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
      auto deliver = [this](const MsgHeader &m, Payload p) { dispatch(m, p); };
      std::lock_guard<std::mutex> g(lock_);
      got = transport_.poll(deliver, 1);
      if (!got) got = transport_.poll(deliver, 1);
    } else if (lock_.try_lock()) {
      got = poll_locked();
      lock_.unlock();
    }
    if (got) {
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
      platform::doorbell_wait(config_.service_sleep_us);
      continue;
    }
    // Idle: nap, longer each time, so a computing thread on this core loses
    // little; the first naps after activity are short, for bursts.
    if (platform::doorbell_wait(nap_us)) nap_us = 1;  // rung: a request is on its way
    else nap_us = std::min(nap_us * 2, config_.service_sleep_us);
  }
}

// ---- access faults --------------------------------------------------------------

bool Runtime::handle_fault(void *addr, bool is_write) {
  if (!space_->maybe_allocated((uintptr_t)addr)) return false;  // not ours: crash as usual
  double t0 = platform::now_seconds();
  PageId page = space_->page_of((uintptr_t)addr);
  Waiter w;
  {
    std::lock_guard<std::mutex> g(lock_);
    (is_write ? stats_.write_faults : stats_.read_faults)++;
    engine_->on_fault(page, is_write ? Access::Write : Access::Read, &w);
  }
  wait(w);
  if (w.status != 0)
    fatal("%s of %p: no live allocation there (freed, or never allocated by rank %d)",
          is_write ? "write" : "read", addr, space_->home_of(page));
  std::lock_guard<std::mutex> g(lock_);
  stats_.fault_time_s += platform::now_seconds() - t0;
  return true;
}

// ---- allocation -------------------------------------------------------------------

void *Runtime::alloc_collective(uint64_t bytes, Placement placement, Rank on_rank) {
  PageId first = 0, count = 0;
  bool ok;
  {
    std::lock_guard<std::mutex> g(lock_);
    ok = space_->collective_reserve(bytes, placement, on_rank, &first, &count);
    if (ok) {
      // Open this rank's home pages, in runs, before any rank can use them.
      PageId run = first;
      bool in_run = false;
      for (PageId p = first; p <= first + count; ++p) {
        bool mine = p < first + count && space_->home_of(p) == rank();
        if (mine && !in_run) {
          run = p;
          in_run = true;
        } else if (!mine && in_run) {
          platform::vm_protect((void *)space_->addr_of(run), (p - run) * page_size(),
                               engine_->home_access());
          in_run = false;
        }
      }
    }
  }
  // Every rank must have asked for the same thing; this also keeps any rank
  // from touching the memory before its homes have opened their pages.
  int64_t v[8] = {(int64_t)bytes, (int64_t)placement, on_rank, ok,
                  -(int64_t)bytes, -(int64_t)placement, -on_rank, -(int64_t)ok};
  std::vector<int64_t> check(v, v + 8);
  reduce(check.data(), 8, ReduceType::Int64, ReduceOp::Max);
  if (check[0] != -check[4] || check[1] != -check[5] || check[2] != -check[6])
    fatal("agora_alloc is collective: ranks called it with different arguments (bytes %lld..%lld, "
          "placement %lld..%lld, rank %lld..%lld)",
          (long long)-check[4], (long long)check[0], (long long)-check[5], (long long)check[1],
          (long long)-check[6], (long long)check[2]);
  if (!ok) {
    if (rank() == 0)
      log_error("agora_alloc(%llu bytes): collective global memory exhausted (%llu of %llu pages "
                "in use); raise AGORA_MEMORY",
                (unsigned long long)bytes, (unsigned long long)space_->collective_pages_used(),
                (unsigned long long)space_->collective_capacity_pages());
    return nullptr;
  }
  return (void *)space_->addr_of(first);
}

void *Runtime::malloc_local(uint64_t bytes) {
  std::lock_guard<std::mutex> g(lock_);
  uint64_t off = arena_->allocate(bytes);
  if (off == UINT64_MAX) {
    log_error("agora_malloc(%llu bytes): this rank's global heap is exhausted (%llu bytes free); "
              "raise AGORA_MEMORY",
              (unsigned long long)bytes, (unsigned long long)arena_->bytes_free());
    return nullptr;
  }
  return (void *)(space_->base() + off);
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
  {
    std::lock_guard<std::mutex> g(lock_);
    send_request(owner, {Channel::Memory, kFreeRequest, 0, offset, (uint64_t)(uintptr_t)&w, 0});
  }
  wait(w);
  return w.status;
}

void Runtime::on_memory_message(const MsgHeader &m) {
  if (m.op == kFreeRequest) {
    int status = free_local(m.a);
    send(m.src, {Channel::Memory, kFreeReply, 0, m.a, m.b, (uint64_t)(int64_t)status});
  } else {
    reinterpret_cast<Waiter *>(m.b)->complete((int)(int64_t)m.c);
  }
}

// ---- synchronisation -------------------------------------------------------------

uint64_t Runtime::create_locks(uint64_t count) {
  std::lock_guard<std::mutex> g(lock_);
  if (tl_thread_id != 0) {
    // An agora thread creates locks alone (no other rank calls with it):
    // ids of this rank's own, clear of the collective ones.
    uint64_t first = (1ull << 62) | ((uint64_t)rank() << 40) | next_thread_lock_id_;
    next_thread_lock_id_ += count;
    return first;
  }
  uint64_t first = next_lock_id_;
  next_lock_id_ += count;
  return first;
}

int Runtime::timed_sync(const std::function<void(Waiter *)> &start, bool patient) {
  double t0 = platform::now_seconds();
  Waiter w;
  {
    std::lock_guard<std::mutex> g(lock_);
    start(&w);
  }
  wait(w, patient);
  std::lock_guard<std::mutex> g(lock_);
  stats_.sync_time_s += platform::now_seconds() - t0;
  return w.status;
}

int Runtime::lock(uint64_t id) {
  return timed_sync([&](Waiter *w) { locks_->acquire(id, this_thread_token(), w); });
}

int Runtime::unlock(uint64_t id) {
  std::lock_guard<std::mutex> g(lock_);
  int status = locks_->release(id, this_thread_token());
  if (status != 0) log_error("agora_unlock: lock %llu is not held by this thread", (unsigned long long)id);
  return status;
}

int Runtime::barrier(bool patient) {
  return timed_sync([&](Waiter *w) { barrier_->arrive(w); }, patient);
}

int Runtime::reduce(void *buf, size_t count, ReduceType type, ReduceOp op) {
  // Work on a private copy: buf may itself be global memory, and touching it
  // under the lock could fault.
  std::vector<std::byte> local(count * 8);
  std::memcpy(local.data(), buf, count * 8);
  int status = timed_sync([&](Waiter *w) { reduce_->start(local.data(), count, type, op, w); });
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
  {
    std::lock_guard<std::mutex> g(lock_);
    if (target < 0) target = (Rank)((threads_placed_++ / config_.threads_per_rank) % nranks());
    threads_->create(target, {ref.data(), ref.size()}, (uint64_t)(uintptr_t)arg, &op);
  }
  wait(op.w);
  if (op.w.status != 0) {
    log_error("agora_thread_create: rank %d could not start the thread (see its message)", target);
    return op.w.status;
  }
  *where = target;
  *id = op.id;
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
  void *ret = fn(arg);
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
  {
    std::lock_guard<std::mutex> g(lock_);
    threads_->join(where, id, &op);
  }
  wait(op.w, true);
  if (op.w.status != 0) {
    const char *why = op.error == JoinError::AlreadyJoined ? "was already joined"
                      : op.error == JoinError::BeingJoined ? "is already being joined by another thread"
                                                           : "was never created";
    log_error("agora_thread_join: thread (rank %d, id %llu) %s", where, (unsigned long long)id, why);
    return op.w.status;
  }
  if (ret) *ret = (void *)(uintptr_t)op.ret;
  return 0;
}

void Runtime::finish_threads() {
  // In the fork-join model the other ranks reach finalize at once and run
  // here the threads the main rank places on them, so finalize must wait
  // until no agora thread runs, or can still be created, on any rank. Counts
  // only grow: two rounds with the same totals mean no rank did anything in
  // between, and then created == ended means no thread is left.
  int64_t last[2] = {0, 0};  // before the first round nothing had happened
  for (;;) {
    for (;;) {
      {
        std::lock_guard<std::mutex> g(lock_);
        if (threads_->running() == 0) break;
      }
      platform::sleep_us(100);  // the service thread serves meanwhile
    }
    barrier(true);
    int64_t now[2];
    {
      std::lock_guard<std::mutex> g(lock_);
      now[0] = (int64_t)threads_->created();
      now[1] = (int64_t)threads_->ended();
    }
    reduce(now, 2, ReduceType::Int64, ReduceOp::Sum);
    if (now[0] == last[0] && now[1] == last[1] && now[0] == now[1]) break;
    last[0] = now[0];
    last[1] = now[1];
  }
  // Threads that have ended may still be returning from run_thread.
  while (os_threads_.load(std::memory_order_acquire) > 0) platform::thread_yield();
}

}  // namespace agora
