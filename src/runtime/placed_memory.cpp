// agora_malloc_placed and the free of what it returns: non-collective
// allocations homed block, cyclic or on one rank. Rank 0 sequences them (see
// placed_memory.h); messages on Channel::Memory, after the arena's free ops.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/status.h"
#include "observe/observe.h"
#include "runtime/runtime.h"

namespace agora {

namespace {
enum PlacedOp : uint16_t {
  kPlacedAlloc = 3,   // caller -> 0: a = pages, b = token, c = placement | rank << 8
  kPlacedFree = 4,    // caller -> 0: a = first page, b = token
  kPlacedOpen = 5,    // 0 -> every rank: a = first, b = count, c = placement | rank << 8;
                      //   payload = u64 broadcast id, then the engine floor (u32 each)
  kPlacedClose = 6,   // 0 -> every rank: a = first, b = count, c = broadcast id
  kPlacedAck = 7,     // rank -> 0: a = broadcast id; payload = that rank's floor (close)
  kPlacedReply = 8,   // 0 -> caller: a = first page, b = token, c = status, payload = u64 free pages
};
constexpr int kNoMemory = AGORA_ERR_NO_MEMORY, kBadPointer = AGORA_ERR_BAD_POINTER;
// A free's private reply code, no public status: the address lies inside a
// live run but does not start it.
constexpr int kInsideRun = 1;

uint64_t pack_placement(Placement placement, Rank rank) {
  return (uint64_t)placement | (uint64_t)(uint32_t)rank << 8;
}
CollectiveRun unpack_run(uint64_t first, uint64_t count, uint64_t packed) {
  return {first, count, (Placement)(packed & 0xff), (Rank)(uint32_t)(packed >> 8)};
}
void merge_floor(std::vector<uint32_t> *into, const uint32_t *from, size_t n) {
  if (into->size() < n) into->resize(n, 0);
  for (size_t i = 0; i < n; ++i) (*into)[i] = std::max((*into)[i], from[i]);
}
}  // namespace

// ---- the caller's side ------------------------------------------------------------

void *Runtime::malloc_placed(uint64_t bytes, Placement placement, Rank on_rank) {
  const uint64_t page = page_size();
  // Rounded up without overflow: (bytes + page - 1) wraps for sizes near 2^64.
  uint64_t pages = bytes / page + (bytes % page != 0);
  if (pages == 0) pages = 1;
  const uint64_t capacity = space_->placed_capacity_pages();
  if (pages > capacity) {
    log_error("agora_malloc_placed(%llu bytes): larger than the whole placed region (%llu bytes, a "
              "quarter of AGORA_MEMORY=%llu); raise AGORA_MEMORY",
              (unsigned long long)bytes, (unsigned long long)(capacity * page),
              (unsigned long long)space_->size());
    return nullptr;
  }
  PlacedRequest req;
  WaitNote note{WaitKind::Placed, 0};
  int status = noted_wait(note, req.w, [&] {
    uint64_t token = (uint64_t)(uintptr_t)&req;
    if (rank() == 0) placed_sequence_alloc(0, token, pages, placement, on_rank);
    else
      send_request(0, {Channel::Memory, kPlacedAlloc, 0, pages, token, pack_placement(placement, on_rank)});
    return AGORA_OK;
  });
  if (status != AGORA_OK) {
    log_error("agora_malloc_placed(%llu bytes): the placed region is exhausted (%llu bytes free of "
              "%llu, possibly fragmented); raise AGORA_MEMORY or free placed allocations",
              (unsigned long long)bytes, (unsigned long long)(req.free_pages * page),
              (unsigned long long)(capacity * page));
    return nullptr;
  }
  return observe_allocation(AllocKind::Placed, (void *)space_->addr_of(req.first), bytes, placement, on_rank);
}

int Runtime::free_placed(uintptr_t addr) {
  PageId first = space_->page_of(addr);
  if (addr % page_size() != 0) {
    if (space_->maybe_allocated(addr))
      log_error("agora_free(%p): not the start of an allocation", (void *)addr);
    else
      log_error("agora_free(%p): not allocated (double free?)", (void *)addr);
    return kBadPointer;
  }
  PlacedRequest req;
  WaitNote note{WaitKind::Placed, 1};
  // A release first: under hlrc diffs this rank sent earlier (another
  // thread's release may have carried writes to these pages) must reach
  // their homes before the homes forget the pages, or they would arrive for
  // memory that is gone or already handed out again.
  int status = noted_wait(note, req.w, [&] {
    uint64_t token = (uint64_t)(uintptr_t)&req;
    engine_->release([this, token, first] {
      if (rank() == 0) placed_sequence_free(0, token, first);
      else send_request(0, {Channel::Memory, kPlacedFree, 0, first, token, 0});
    });
    return AGORA_OK;
  });
  if (status == kInsideRun) {
    log_error("agora_free(%p): not the start of an allocation", (void *)addr);
    return kBadPointer;
  }
  if (status != AGORA_OK) {
    log_error("agora_free(%p): not allocated (double free?)", (void *)addr);
    return kBadPointer;
  }
  return AGORA_OK;
}

// ---- rank 0: the sequencer --------------------------------------------------------

void Runtime::placed_sequence_alloc(Rank requester, uint64_t token, uint64_t pages,
                                    Placement placement, Rank on_rank) {
  PageId first = placed_->pages.allocate(pages);
  if (first == UINT64_MAX) {
    placed_reply(requester, token, kNoMemory, 0, placed_->pages.pages_free());
    return;
  }
  uint64_t id = placed_->next_id++;
  auto &b = placed_->in_flight[id];
  b.run = {first, pages, placement, on_rank};
  b.requester = requester;
  b.token = token;
  b.acks_left = nranks();  // rank 0's own part counts as one
  std::vector<std::byte> payload(8 + 4 * placed_->floor.size());
  std::memcpy(payload.data(), &id, 8);
  if (!placed_->floor.empty()) std::memcpy(payload.data() + 8, placed_->floor.data(), 4 * placed_->floor.size());
  for (Rank r = 1; r < nranks(); ++r)
    send_request(r, {Channel::Memory, kPlacedOpen, 0, first, pages, pack_placement(placement, on_rank)},
                 {payload.data(), payload.size()});
  placed_open(b.run, placed_->floor);
  placed_acknowledged(id, {});
}

void Runtime::placed_sequence_free(Rank requester, uint64_t token, PageId first) {
  bool inside = false;
  PageId count = placed_->pages.retire(first, &inside);
  if (count == 0) {
    placed_reply(requester, token, inside ? kInsideRun : kBadPointer, 0, 0);
    return;
  }
  uint64_t id = placed_->next_id++;
  auto &b = placed_->in_flight[id];
  b.is_free = true;
  b.run.first = first;
  b.run.count = count;
  b.requester = requester;
  b.token = token;
  b.acks_left = nranks();  // rank 0's own part counts as one
  for (Rank r = 1; r < nranks(); ++r)
    send_request(r, {Channel::Memory, kPlacedClose, 0, first, count, id});
  placed_close(first, count, &b.floor);
  placed_acknowledged(id, {});
}

// Called once for rank 0's own part (empty payload) and once per other
// rank's acknowledgement; the last one answers the caller.
void Runtime::placed_acknowledged(uint64_t id, Payload floor) {
  auto it = placed_->in_flight.find(id);
  if (it == placed_->in_flight.end()) fatal("placed memory: acknowledgement of unknown operation %llu", (unsigned long long)id);
  PlacedSequencer::Broadcast &b = it->second;
  if (floor.size) {
    std::vector<uint32_t> theirs(floor.size / 4);
    std::memcpy(theirs.data(), floor.data, theirs.size() * 4);
    merge_floor(&b.floor, theirs.data(), theirs.size());
  }
  if (--b.acks_left > 0) return;
  // Every rank has it: the pages of a free may be reused, with a floor that
  // covers whatever they carried.
  if (b.is_free) {
    merge_floor(&placed_->floor, b.floor.data(), b.floor.size());
    placed_->pages.release(b.run.first, b.run.count);
  }
  placed_reply(b.requester, b.token, AGORA_OK, b.run.first, 0);
  placed_->in_flight.erase(it);
}

void Runtime::placed_reply(Rank requester, uint64_t token, int status, uint64_t first, uint64_t free_pages) {
  if (requester == rank()) {
    auto *req = reinterpret_cast<PlacedRequest *>(token);
    req->first = first;
    req->free_pages = free_pages;
    req->w.complete(status);
    return;
  }
  send(requester, {Channel::Memory, kPlacedReply, 0, first, token, (uint64_t)(int64_t)status},
       {(const std::byte *)&free_pages, sizeof free_pages});
}

// ---- every rank ----------------------------------------------------------------------

void Runtime::placed_open(const CollectiveRun &run, const std::vector<uint32_t> &floor) {
  // Whatever a stale write notice recreated for these pages since they were
  // last freed goes first; then the floor, before any home state exists.
  std::vector<uint32_t> ignored;
  engine_->forget_pages(run.first, run.count, &ignored);
  engine_->raise_page_floor(floor);
  if (!space_->placed_insert(run))
    fatal("agora_malloc_placed: cannot record the allocation of pages %llu..+%llu (out of memory, "
          "or overlapping a live one)",
          (unsigned long long)run.first, (unsigned long long)run.count);
  open_home_pages(run, "agora_malloc_placed", run.count * page_size());
}

void Runtime::placed_close(PageId first, PageId count, std::vector<uint32_t> *floor) {
  engine_->forget_pages(first, count, floor);  // while the pages still have their homes
  CollectiveRun removed;
  if (!space_->placed_remove(first, &removed))
    fatal("agora_free: cannot drop the record of pages %llu..+%llu (out of memory?)",
          (unsigned long long)first, (unsigned long long)count);
  void *addr = (void *)space_->addr_of(first);
  if (!platform::vm_protect(addr, count * page_size(), Access::None) ||
      !platform::vm_discard(range_, first * page_size(), count * page_size()))
    fatal("agora_free(%p): cannot close and zero its %llu pages: %s", addr, (unsigned long long)count,
          std::strerror(errno));
}

void Runtime::on_placed_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kPlacedAlloc:
      placed_sequence_alloc(m.src, m.b, m.a, (Placement)(m.c & 0xff), (Rank)(uint32_t)(m.c >> 8));
      break;
    case kPlacedFree: placed_sequence_free(m.src, m.b, m.a); break;
    case kPlacedOpen: {
      uint64_t id;
      if (p.size < 8) fatal("placed memory: malformed announcement from rank %d", m.src);
      std::memcpy(&id, p.data, 8);
      std::vector<uint32_t> floor((p.size - 8) / 4);
      if (!floor.empty()) std::memcpy(floor.data(), p.data + 8, floor.size() * 4);
      placed_open(unpack_run(m.a, m.b, m.c), floor);
      send(m.src, {Channel::Memory, kPlacedAck, 0, id, 0, 0});
      break;
    }
    case kPlacedClose: {
      std::vector<uint32_t> floor;
      placed_close(m.a, m.b, &floor);
      send(m.src, {Channel::Memory, kPlacedAck, 0, m.c, 0, 0},
           {(const std::byte *)floor.data(), floor.size() * 4});
      break;
    }
    case kPlacedAck: placed_acknowledged(m.a, p); break;
    case kPlacedReply: {
      auto *req = reinterpret_cast<PlacedRequest *>(m.b);
      req->first = m.a;
      if (p.size == 8) std::memcpy(&req->free_pages, p.data, 8);
      req->w.complete((int)(int64_t)m.c);
      break;
    }
    default: fatal("memory message with unknown op %u from rank %d", (unsigned)m.op, m.src);
  }
}

}  // namespace agora
