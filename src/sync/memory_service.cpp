#include "sync/memory_service.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"

namespace agora {

namespace {
// Channel::Memory's ops. The runtime and the simulator both host this
// service, so this is the one definition of the format.
enum MemoryOp : uint16_t {
  kFreeRequest = 1,  // caller -> owner: a = arena offset, b = token (Waiter)
  kFreeReply = 2,    // owner -> caller: a = offset, b = token, c = status
  kPlacedAlloc = 3,  // caller -> 0: a = pages, b = token, c = placement | rank << 8
  kPlacedFree = 4,   // caller -> 0: a = first page, b = token
  kPlacedOpen = 5,   // 0 -> every rank: a = first, b = count, c = placement | rank << 8;
                     //   payload = u64 broadcast id, then the engine floor (u32 each)
  kPlacedClose = 6,  // 0 -> every rank: a = first, b = count, c = broadcast id
  kPlacedAck = 7,    // rank -> 0: a = broadcast id; payload = that rank's floor (close)
  kPlacedReply = 8,  // 0 -> caller: a = first page, b = token, c = status, payload = u64 free pages
};

uint64_t pack_placement(Placement placement, Rank rank) { return (uint64_t)placement | (uint64_t)(uint32_t)rank << 8; }
CollectiveRun unpack_run(uint64_t first, uint64_t count, uint64_t packed) {
  return {first, count, (Placement)(packed & 0xff), (Rank)(uint32_t)(packed >> 8)};
}
void merge_floor(std::vector<uint32_t> *into, const uint32_t *from, size_t n) {
  if (into->size() < n) into->resize(n, 0);
  for (size_t i = 0; i < n; ++i) (*into)[i] = std::max((*into)[i], from[i]);
}
}  // namespace

MemoryService::MemoryService(ComponentHost &host, ProtocolEngine &engine, Hooks hooks, PageId placed_first,
                             PageId placed_pages)
    : host_(host), engine_(engine), hooks_(std::move(hooks)) {
  if (host.rank() == 0) placed_.emplace(placed_first, placed_pages);
}

// ---- the caller's side ------------------------------------------------------------

void MemoryService::free_remote(Rank owner, uint64_t offset, Waiter *w) {
  engine_.release([this, owner, offset, w] {
    host_.send_request(owner, {Channel::Memory, kFreeRequest, 0, offset, (uint64_t)(uintptr_t)w, 0});
  });
}

void MemoryService::placed_alloc(uint64_t pages, Placement placement, Rank on_rank, PlacedRequest *req) {
  uint64_t token = (uint64_t)(uintptr_t)req;
  if (host_.rank() == 0)
    sequence_alloc(0, token, pages, placement, on_rank);
  else
    host_.send_request(0, {Channel::Memory, kPlacedAlloc, 0, pages, token, pack_placement(placement, on_rank)});
}

void MemoryService::placed_free(PageId first, PlacedRequest *req) {
  // A release first: diffs this rank sent earlier (another thread's release
  // may have carried writes to these pages) must reach their homes before
  // the homes forget the pages, or they would arrive for memory that is gone
  // or already handed out again.
  uint64_t token = (uint64_t)(uintptr_t)req;
  engine_.release([this, token, first] {
    if (host_.rank() == 0)
      sequence_free(0, token, first);
    else
      host_.send_request(0, {Channel::Memory, kPlacedFree, 0, first, token, 0});
  });
}

// ---- rank 0: the sequencer --------------------------------------------------------

void MemoryService::sequence_alloc(Rank requester, uint64_t token, uint64_t pages, Placement placement, Rank on_rank) {
  PageId first = placed_->pages.allocate(pages);
  if (first == UINT64_MAX) {
    reply(requester, token, kNoMemory, 0, placed_->pages.pages_free());
    return;
  }
  uint64_t id = placed_->next_id++;
  auto &b = placed_->in_flight[id];
  b.run = {first, pages, placement, on_rank};
  b.requester = requester;
  b.token = token;
  b.acks_left = host_.nranks();  // rank 0's own part counts as one
  std::vector<std::byte> payload(8 + 4 * placed_->floor.size());
  std::memcpy(payload.data(), &id, 8);
  if (!placed_->floor.empty()) std::memcpy(payload.data() + 8, placed_->floor.data(), 4 * placed_->floor.size());
  for (Rank r = 1; r < host_.nranks(); ++r)
    host_.send_request(r, {Channel::Memory, kPlacedOpen, 0, first, pages, pack_placement(placement, on_rank)},
                       {payload.data(), payload.size()});
  open(b.run, placed_->floor);
  acknowledged(id, {});
}

void MemoryService::sequence_free(Rank requester, uint64_t token, PageId first) {
  bool inside = false;
  PageId count = placed_->pages.retire(first, &inside);
  if (count == 0) {
    reply(requester, token, inside ? kInsideRun : kBadPointer, 0, 0);
    return;
  }
  uint64_t id = placed_->next_id++;
  auto &b = placed_->in_flight[id];
  b.is_free = true;
  b.run.first = first;
  b.run.count = count;
  b.requester = requester;
  b.token = token;
  b.acks_left = host_.nranks();  // rank 0's own part counts as one
  for (Rank r = 1; r < host_.nranks(); ++r) host_.send_request(r, {Channel::Memory, kPlacedClose, 0, first, count, id});
  close(first, count, &b.floor);
  acknowledged(id, {});
}

// Called once for rank 0's own part (empty payload) and once per other
// rank's acknowledgement; the last one answers the caller.
void MemoryService::acknowledged(uint64_t id, Payload floor) {
  auto it = placed_->in_flight.find(id);
  if (it == placed_->in_flight.end())
    fatal("placed memory: acknowledgement of unknown operation %llu", (unsigned long long)id);
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
  reply(b.requester, b.token, AGORA_OK, b.run.first, 0);
  placed_->in_flight.erase(it);
}

void MemoryService::reply(Rank requester, uint64_t token, int status, uint64_t first, uint64_t free_pages) {
  if (requester == host_.rank()) {
    auto *req = reinterpret_cast<PlacedRequest *>(token);
    req->first = first;
    req->free_pages = free_pages;
    req->w.complete(status);
    return;
  }
  host_.send(requester, {Channel::Memory, kPlacedReply, 0, first, token, (uint64_t)(int64_t)status},
             {(const std::byte *)&free_pages, sizeof free_pages});
}

// ---- every rank ----------------------------------------------------------------------

void MemoryService::open(const CollectiveRun &run, const std::vector<uint32_t> &floor) {
  // Whatever a stale write notice recreated for these pages since they were
  // last freed goes first; then the floor, before any home state exists.
  std::vector<uint32_t> ignored;
  engine_.forget_pages(run.first, run.count, &ignored);
  engine_.raise_page_floor(floor);
  hooks_.placed_opened(run);
}

void MemoryService::close(PageId first, PageId count, std::vector<uint32_t> *floor) {
  engine_.forget_pages(first, count, floor);  // while the pages still have their homes
  hooks_.placed_closed(first, count);
}

void MemoryService::on_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kFreeRequest: {
      int status = hooks_.free_local(m.a);
      host_.send(m.src, {Channel::Memory, kFreeReply, 0, m.a, m.b, (uint64_t)(int64_t)status});
      break;
    }
    case kFreeReply:
      reinterpret_cast<Waiter *>(m.b)->complete((int)(int64_t)m.c);
      break;
    case kPlacedAlloc:
      if (!placed_)
        fatal("placed memory: allocation request from rank %d at rank %d (not the sequencer)", m.src, host_.rank());
      sequence_alloc(m.src, m.b, m.a, (Placement)(m.c & 0xff), (Rank)(uint32_t)(m.c >> 8));
      break;
    case kPlacedFree:
      if (!placed_)
        fatal("placed memory: free request from rank %d at rank %d (not the sequencer)", m.src, host_.rank());
      sequence_free(m.src, m.b, m.a);
      break;
    case kPlacedOpen: {
      uint64_t id;
      if (p.size < 8) fatal("placed memory: malformed announcement from rank %d", m.src);
      std::memcpy(&id, p.data, 8);
      std::vector<uint32_t> floor((p.size - 8) / 4);
      if (!floor.empty()) std::memcpy(floor.data(), p.data + 8, floor.size() * 4);
      open(unpack_run(m.a, m.b, m.c), floor);
      host_.send(m.src, {Channel::Memory, kPlacedAck, 0, id, 0, 0});
      break;
    }
    case kPlacedClose: {
      std::vector<uint32_t> floor;
      close(m.a, m.b, &floor);
      host_.send(m.src, {Channel::Memory, kPlacedAck, 0, m.c, 0, 0},
                 {(const std::byte *)floor.data(), floor.size() * 4});
      break;
    }
    case kPlacedAck:
      if (!placed_)
        fatal("placed memory: acknowledgement from rank %d at rank %d (not the sequencer)", m.src, host_.rank());
      acknowledged(m.a, p);
      break;
    case kPlacedReply: {
      auto *req = reinterpret_cast<PlacedRequest *>(m.b);
      req->first = m.a;
      if (p.size == 8) std::memcpy(&req->free_pages, p.data, 8);
      req->w.complete((int)(int64_t)m.c);
      break;
    }
    default:
      fatal("memory message with unknown op %u from rank %d", (unsigned)m.op, m.src);
  }
}

}  // namespace agora
