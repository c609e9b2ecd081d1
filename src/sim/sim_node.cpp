#include "sim/sim_node.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "sim/sim_cluster.h"
#include "sim/sim_faulty_engine.h"

namespace agora {

SimNode::SimNode(SimCluster &cluster, Rank rank)
    : cluster_(cluster),
      options_(cluster.options()),
      rank_(rank),
      locks_(*this),
      barrier_(*this),
      reduce_(*this),
      thread_barriers_(*this, [this](uint64_t object) { return manager_of(object); }),
      semaphores_(*this, [this](uint64_t object) { return manager_of(object); }),
      conditions_(*this, [this](uint64_t object) { return manager_of(object); }),
      thread_reductions_(*this, [this](uint64_t object) { return manager_of(object); }),
      watch_(*this, options_.watch,
             [this] {
               RankState s = hang_state_ ? hang_state_() : RankState{};
               s.sent = stats_.messages_sent;
               s.received = messages_in_;
               return s;
             }),
      cache_(cluster.options().cache_pages, cluster.options().cache_policy, cluster.options().cache_pages / 4) {
  const SimOptions &o = options_;
  frames_.assign(o.total_pages() * o.page_size, std::byte{0});
  view_.assign(o.total_pages(), kUnset);
  tracked_.assign(o.total_pages(), 0);
  written_.assign(o.total_pages(), 0);
  marked_.assign(o.total_pages(), 0);
  meta_.assign(kHomeMetaBytes / 4, 0);
  engine_ = protocol_create(o.protocol, *this, o.engine);
  if (!engine_) fatal("simulator: unknown protocol %s", o.protocol.c_str());
  home_access_ = engine_->home_access();
  locks_.attach(engine_.get());
  barrier_.attach(engine_.get());
  thread_barriers_.attach(engine_.get());
  semaphores_.attach(engine_.get());

  using Fault = SimOptions::ServiceFault;
  ProtocolEngine *thread_engine = engine_.get(), *memory_engine = engine_.get();
  if (o.service_fault == Fault::ThreadAcquireIgnoresRelease) {
    faulty_engine_ = std::make_unique<SimFaultyEngine>(*engine_, SimFaultyEngine::Fault::AcquireIgnoresInfo);
    thread_engine = faulty_engine_.get();
  } else if (o.service_fault == Fault::FreeSkipsRelease) {
    faulty_engine_ = std::make_unique<SimFaultyEngine>(*engine_, SimFaultyEngine::Fault::ReleasePublishesNothing);
    memory_engine = faulty_engine_.get();
  }
  threads_.emplace(*this, *thread_engine, [this](uint64_t id, Payload fn, uint64_t arg) {
    started_.push_back({id, std::vector<std::byte>(fn.data, fn.data + fn.size), arg});
    return 0;
  });
  if (o.arena_pages) arena_.emplace(o.arena_first(rank) * o.page_size, o.arena_pages * o.page_size, o.page_size);
  MemoryService::Hooks hooks;
  hooks.free_local = [this](uint64_t offset) { return free_local(offset); };
  hooks.placed_opened = [this](const CollectiveRun &run) { placed_opened(run); };
  hooks.placed_closed = [this](PageId first, PageId count) { placed_closed(first, count); };
  memory_.emplace(*this, *memory_engine, std::move(hooks), o.placed_first(), o.placed_pages);
}

Rank SimNode::nranks() const { return options_.nodes; }
size_t SimNode::page_size() const { return options_.page_size; }

Rank SimNode::cyclic_home(PageId page) const {
  const uint64_t block = page / std::max<size_t>(options_.home_block, 1) + options_.seed;
  if (options_.server_nodes > 0)
    return (Rank)(options_.nodes - options_.server_nodes + (Rank)(block % (uint64_t)options_.server_nodes));
  return (Rank)(block % (uint64_t)options_.nodes);
}

Rank SimNode::home_of(PageId page) const {
  const SimOptions &o = options_;
  if (page < o.pages) return cyclic_home(page);
  if (page - o.placed_first() < o.placed_pages) {
    CollectiveRun run;
    return placed_.find(page, &run) ? run.home(page, o.nodes) : -1;
  }
  if (page < o.total_pages()) return (Rank)((page - o.arena_first(0)) / o.arena_pages);
  return -1;  // past the memory (as in the runtime): no page, no frame
}

Rank SimNode::manager_of(uint64_t object) const {
  PageId page = object / page_size();
  Rank home = home_of(page);
  return home >= 0 ? home : cyclic_home(page);
}

bool SimNode::page_allocated(PageId page) const {
  const SimOptions &o = options_;
  if (page >= o.total_pages()) return false;  // names of sync objects only: no memory
  if (page < o.pages) return true;
  if (page - o.placed_first() < o.placed_pages) return home_of(page) >= 0;
  Rank owner = home_of(page);
  return owner == rank_ && arena_->page_live(page - o.arena_first(owner));
}

Access SimNode::access(PageId page) const {
  uint8_t a = view_[page];
  if (a != kUnset) return (Access)a;
  return home_of(page) == rank_ && page_allocated(page) ? home_access_ : Access::None;
}

void SimNode::set_access(PageId page, Access access) {
  if (cache_.bounded() && home_of(page) != rank_) cache_.note_access(page, access);
  if (options_.frames_move && access == Access::None && home_of(page) != rank_) closed_copies_.push_back(page);
  if (options_.ignore_downgrades && access < this->access(page)) return;
  view_[page] = (uint8_t)access;
}

void SimNode::move_frame(PageId page) { std::memset(frame(page), SimOptions::kMovedByte ^ moves_++, page_size()); }

void SimNode::replacing_frame(PageId page) {
  if (!options_.frames_move || home_of(page) == rank_ || access(page) != Access::None) return;
  move_frame(page);
  stats_.cache_frames_pooled++;
}

void SimNode::take_unused_frames() {
  std::sort(closed_copies_.begin(), closed_copies_.end());
  closed_copies_.erase(std::unique(closed_copies_.begin(), closed_copies_.end()), closed_copies_.end());
  std::vector<PageId> kept;
  for (PageId page : closed_copies_) {
    if (access(page) != Access::None || home_of(page) == rank_) continue;  // open again, or homed here now
    if (engine_->frame_in_use(page))
      kept.push_back(page);  // asked again next time
    else
      move_frame(page);
  }
  closed_copies_.swap(kept);
}

bool SimNode::evict(PageId page) {
  ProtocolEngine::Eviction e = engine_->evict(page);
  if (e == ProtocolEngine::Eviction::Busy) return false;
  std::memset(frame(page), SimOptions::kEvictedByte, page_size());
  return true;
}

void SimNode::trim_cache() {
  // At most one proposal per resident page and pass: the rest are busy.
  for (size_t tries = 2 * cache_.resident() + 2; cache_.over() && tries > 0; --tries) {
    PageId victim;
    if (!cache_.propose(&victim)) break;
    evict(victim);
  }
  engine_->end_evictions();
  if (cache_.bounded()) stats_.cache_resident_peak = std::max<uint64_t>(stats_.cache_resident_peak, cache_.resident());
}

bool SimNode::evict_random(uint64_t pick) {
  PageId page = pick % options_.total_pages();
  if (home_of(page) == rank_ || home_of(page) < 0 || access(page) == Access::None) return false;
  const bool evicted = evict(page);
  engine_->end_evictions();
  return evicted;
}

void SimNode::reset_view(PageId first, PageId count) {
  for (PageId p = first; p < first + count; ++p) cache_.note_access(p, Access::None);  // no copy of a new or freed page
  // As the runtime's CopyCache::forget: a freed page's frame leaves the pool
  // (its bytes are the zeroes the free leaves, not taken later).
  closed_copies_.erase(std::remove_if(closed_copies_.begin(), closed_copies_.end(),
                                      [&](PageId p) { return p - first < count; }),
                       closed_copies_.end());
  std::fill(view_.begin() + first, view_.begin() + first + count, kUnset);
}

void SimNode::placed_opened(const CollectiveRun &run) {
  if (!placed_.insert(run))
    fatal("simulator: node %d cannot record placed pages %llu..+%llu (overlapping a live run)", rank_,
          (unsigned long long)run.first, (unsigned long long)run.count);
  reset_view(run.first, run.count);  // homes open, as the runtime's open_home_pages
}

void SimNode::placed_closed(PageId first, PageId count) {
  CollectiveRun removed;
  if (!placed_.remove(first, &removed))
    fatal("simulator: node %d has no placed run at page %llu to drop", rank_, (unsigned long long)first);
  reset_view(first, count);                           // closed: no live run
  std::memset(frame(first), 0, count * page_size());  // as vm_discard zeroes them
}

int SimNode::free_local(uint64_t offset) {
  if (!arena_) fatal("simulator: a free at node %d, which has no arena", rank_);
  switch (arena_->release(offset)) {
    case ArenaAllocator::FreeResult::Ok:
      return 0;
    case ArenaAllocator::FreeResult::InsideBlock:  // not the start of an allocation
    default:
      return -5;  // or not allocated (double free?)
  }
}

void SimNode::send(Rank dst, MsgHeader header, Payload payload) {
  header.src = rank_;
  stats_.messages_sent++;
  stats_.bytes_sent += sizeof header + payload.size;
  cluster_.post(rank_, dst, header, payload);
}

void SimNode::send_control(Rank dst, MsgHeader header, Payload payload) {
  header.src = rank_;
  cluster_.post(rank_, dst, header, payload);
}

void SimNode::deliver(const MsgHeader &m, Payload p) {
  if (m.channel != Channel::Watch) messages_in_++;
  switch (m.channel) {
    case Channel::Protocol:
      engine_->on_message(m, p);
      break;
    case Channel::Lock:
      locks_.on_message(m, p);
      break;
    case Channel::Barrier:
      barrier_.on_message(m, p);
      break;
    case Channel::Reduce:
      reduce_.on_message(m, p);
      break;
    case Channel::Memory:
      memory_->on_message(m, p);
      break;
    case Channel::Thread:
      threads_->on_message(m, p);
      break;
    case Channel::Watch:
      watch_.on_message(m, p);
      break;
    case Channel::ThreadBarrier:
      thread_barriers_.on_message(m, p);
      break;
    case Channel::ThreadReduce:
      thread_reductions_.on_message(m, p);
      break;
    case Channel::Semaphore:
      semaphores_.on_message(m, p);
      break;
    case Channel::Condition:
      conditions_.on_message(m, p);
      break;
    default:
      fatal("simulator: message on unknown channel %u from node %d", (unsigned)m.channel, m.src);
  }
}

bool SimNode::sole_application_thread() const { return options_.application_threads == 1; }

void SimNode::track_home_writes(PageId first, PageId count) {
  if (!options_.track_home_writes) fatal("simulator: node %d asked to track writes it does not track", rank_);
  if (first > tracked_.size() || count > tracked_.size() - first)
    fatal("simulator: node %d asked to track pages %llu..+%llu past its memory", rank_, (unsigned long long)first,
          (unsigned long long)count);
  std::fill(tracked_.begin() + first, tracked_.begin() + first + count, 1);
}

void SimNode::stored(PageId page) {
  if (page < tracked_.size() && tracked_[page] && !written_[page]) {
    written_[page] = 1;
    written_list_.push_back(page);
  }
}

void SimNode::collect_home_writes(std::vector<PageId> *written) {
  for (PageId p : written_list_) written_[p] = 0;  // re-armed
  written->insert(written->end(), written_list_.begin(), written_list_.end());
  written_list_.clear();
}

std::byte *SimNode::home_meta() { return options_.one_sided ? reinterpret_cast<std::byte *>(meta_.data()) : nullptr; }

void SimNode::mark_shared(PageId page) {
  if (!marked_[page]) {
    marked_[page] = 1;
    marked_list_.push_back(page);
  }
}

void SimNode::collect_newly_shared(std::vector<PageId> *pages) {
  for (PageId p : marked_list_) marked_[p] = 0;
  pages->insert(pages->end(), marked_list_.begin(), marked_list_.end());
  marked_list_.clear();
}

bool SimNode::read_remote(Rank home, PageId first, uint32_t count, uint32_t meta_bytes) {
  if (!options_.one_sided || home == rank_ || home < 0 || home >= nranks() || count == 0 ||
      meta_bytes > kHomeMetaBytes || first >= options_.total_pages() || count > options_.total_pages() - first)
    return false;
  SimNode &h = cluster_.node(home);
  for (PageId p = first; p < first + count; ++p)
    if (h.home_of(p) != home || !h.page_allocated(p)) return false;  // as the runtime, which cannot tell
  // The marks first (the runtime flushes them before reading), then the
  // meta and the pages at two moments, then the result: each a delivery.
  for (PageId p = first; p < first + count; ++p) h.mark_shared(p);
  stats_.one_sided_reads++;
  stats_.one_sided_bytes += meta_bytes + count * page_size();
  struct Read {
    std::vector<std::byte> meta, pages;
  };
  auto read = std::make_shared<Read>();
  const size_t bytes = count * page_size();
  std::deque<std::function<void()>> steps;
  steps.push_back([&h, read, meta_bytes] {
    const std::byte *m = h.home_meta();
    read->meta.assign(m, m + meta_bytes);
  });
  steps.push_back([&h, read, first, bytes] { read->pages.assign(h.frame(first), h.frame(first) + bytes); });
  steps.push_back([this, read, home, first, count] {
    engine_->on_remote_read(home, first, count, {read->meta.data(), read->meta.size()},
                            {read->pages.data(), read->pages.size()});
  });
  cluster_.post_steps(std::move(steps));
  return true;
}

}  // namespace agora
