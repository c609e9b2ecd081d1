// How a simulated cluster is built: nodes, memory, protocol, seed, and the
// faults the testers inject to show they catch broken coherence.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "memory/page_cache.h"
#include "protocol/engine.h"
#include "sync/hang_watch.h"

namespace agora {

struct SimOptions {
  int nodes = 4;
  // The shared pages [0, pages), homed cyclically (shifted by the seed so
  // that every node is home to different pages across seeds), live from the start.
  size_t pages = 8;
  // ... in blocks of this many consecutive pages per home (1: page by page),
  // so that a node's misses to one home can be sequential (prefetch; sc's
  // batched writes).
  size_t home_block = 1;
  // Memory servers (docs/memory-servers.md): the last server_nodes nodes
  // home every shared page (cyclically among them) and compute nothing (the
  // random programs give their threads barriers only). 0: every node homes.
  int server_nodes = 0;
  size_t page_size = 64;  // tiny pages: more sharing, more races per step
  uint64_t seed = 1;
  std::string protocol = "sc";
  EngineOptions engine;
  // Memory allocated while the cluster runs (MemoryService), after the
  // shared pages: a placed region of placed_pages pages (agora_malloc_placed,
  // sequenced by node 0), then an arena of arena_pages pages per node (its
  // agora_malloc heap, homed on it).
  size_t placed_pages = 0;
  size_t arena_pages = 0;
  // Fault injection, to show the testers catch broken coherence: the
  // simulated mprotect ignores every downgrade, as a buggy platform would.
  bool ignore_downgrades = false;
  // Fault injection into what the services ask of the engine: the thread
  // service's acquires (a new thread's, a remote joiner's) ignore what the
  // releaser handed over; or the memory service frees (remote, placed)
  // without publishing this node's writes first.
  enum class ServiceFault { None, ThreadAcquireIgnoresRelease, FreeSkipsRelease };
  ServiceFault service_fault = ServiceFault::None;
  // The host side of write tracking and one-sided reads (EngineHost): a
  // node records the application's stores to the home pages it tracks
  // (SimNode::stored) instead of the engine protecting them; one_sided reads
  // pages of another node without it (SimNode::read_remote: the marks at
  // once, then the meta and the pages as two snapshots at moments the
  // network chooses, then the result).
  bool track_home_writes = false;
  bool one_sided = false;
  // Application threads per node, when the program runs a fixed number
  // (0: unknown). With 1, nodes report sole_application_thread() as a rank
  // running one thread does (regc relies on it to drop entries sooner).
  int application_threads = 0;
  // The bounded cache (docs/cache.md): each node holds at most cache_pages
  // copies of remote pages (0: unbounded), evicting by cache_policy after
  // every delivery; and, at any delivery, with chance evict_chance one node
  // evicts one of its copies chosen at random (evictions at random moments).
  // An evicted frame is overwritten with kEvictedByte, as the runtime's hole
  // punch leaves it meaningless: any read of it that the protocol lets
  // through returns a value nobody wrote.
  size_t cache_pages = 0;
  CachePolicy cache_policy = CachePolicy::Clock;
  double evict_chance = 0;
  static constexpr uint8_t kEvictedByte = 0xee;
  // The runtime's frame pool (docs/cache.md) moves frames: a copy the
  // engine is about to overwrite whole may get another frame
  // (EngineHost::replacing_frame), and an inaccessible copy whose frame the
  // engine does not need (ProtocolEngine::frame_in_use) loses it between
  // engine calls. A node models both by overwriting the frame with
  // kMovedByte (varied per move), so a protocol that relied on those bytes
  // reads values nobody wrote.
  bool frames_move = true;
  static constexpr uint8_t kMovedByte = 0x5a;
  // The hang watch's periods, in the simulated seconds the test ticks it with.
  HangWatch::Options watch;

  // The page layout: shared pages, placed region, one arena per node.
  PageId placed_first() const { return pages; }
  PageId arena_first(Rank node) const { return pages + placed_pages + (PageId)node * arena_pages; }
  PageId total_pages() const { return arena_first(nodes); }
};

}  // namespace agora
