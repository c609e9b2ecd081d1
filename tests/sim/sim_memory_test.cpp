// Allocation in the simulator (MemoryService hosted on every node), on every
// protocol: threads on random nodes run random jobs.
//  - placed: agora_malloc_placed of 1-3 pages (block, cyclic or on a random
//    node), sequenced by node 0 over reordered messages; the run must lie in
//    the placed region and overlap no live run; the thread writes and reads
//    words of it (a word it did not write reads 0: fresh runs are zeroed),
//    then frees it.
//  - produce: agora_malloc in the thread's own node's arena, write every word,
//    hand the block over through a lock-protected mailbox.
//  - consume: take a block from the mailbox (under the lock), read it (the
//    producer's values), write some words, and free it: locally, or through
//    a remote free to its owner, who may hand it out again at once.
// Every read is checked against the latest write in the simulator's order.
// The FreeSkipsRelease fault (a free that does not publish the freeing
// node's writes first, so they reach the reused block later) must be caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <sstream>

#include "sim/sim_access.h"
#include "sim/sim_scheduler.h"
#include "sim/sim_seeds.h"

using namespace agora;
using namespace agora::simtest;

namespace {

enum class Job { Placed, Produce, Consume };

struct Block {
  Rank owner;
  uint64_t offset, words;  // byte offset (global), length in words
};

struct Worker {
  Rank node = 0;
  std::vector<Job> jobs;
  size_t job = 0;
  int state = 0;
  bool waiting = false;
  Waiter w;
  PlacedRequest req;
  // The current job's memory: first word, words, and which of them to touch.
  uint64_t first_word = 0, words = 0;
  Block block{};
  PageId run_first = 0, run_pages = 0;
  std::vector<uint64_t> touch;
  size_t i = 0;
  bool done = false;
};

struct Result {
  bool ok = true;
  std::string failure;
  uint64_t placed = 0, placed_refused = 0, remote_frees = 0, local_frees = 0;
};

SimOptions options_for(uint64_t seed, const std::string &protocol) {
  SimOptions o;
  o.protocol = protocol;
  o.seed = seed;
  o.nodes = 2 + (int)(seed % 3);  // 2..4 nodes
  o.pages = 1;
  o.page_size = 64;
  o.placed_pages = 6 + seed / 3 % 6;  // 6..11 pages: allocations sometimes fail
  o.arena_pages = 4;
  return o;
}

Result run_memory(const SimOptions &o, bool placed_jobs = true) {
  SimCluster cluster(o);
  auto &rng = cluster.rng();
  const uint64_t per_page = o.page_size / 8;
  std::vector<uint64_t> shadow(o.total_pages() * per_page, 0);
  std::deque<Worker> workers;
  int threads = o.nodes + (int)(rng() % 3);
  for (int t = 0; t < threads; ++t) {
    Worker &w = workers.emplace_back();
    w.node = (Rank)(t < o.nodes ? t : rng() % o.nodes);
    for (int j = 6 + (int)(rng() % 6); j > 0; --j)
      w.jobs.push_back(placed_jobs ? (Job)(rng() % 3) : (Job)(1 + rng() % 2));
  }
  const uint64_t mailbox_lock = 0;
  std::deque<Block> mailbox;
  std::map<PageId, PageId> live_runs;  // first -> pages, as the test saw them handed out
  uint64_t next_value = 0, steps = 0;
  Result result;
  auto fail = [&](const std::string &what) {
    if (!result.ok) return;
    std::ostringstream s;
    s << "seed " << o.seed << " (" << o.protocol << ", nodes " << o.nodes << ", placed pages " << o.placed_pages
      << "), step " << steps << ": " << what;
    result.ok = false;
    result.failure = s.str();
  };

  auto step = [&](size_t ti) -> bool {
    Worker &t = workers[ti];
    if (t.done) return false;
    if (t.waiting) {
      if (!t.w.done()) return false;
      t.waiting = false;
    }
    if (t.job == t.jobs.size()) {
      t.done = true;
      return true;
    }
    SimNode &node = cluster.node(t.node);
    auto next_job = [&] {
      t.job++;
      t.state = 0;
      return true;
    };
    // Writes t.touch (word indices from first_word), then reads them back
    // (or, with read_all, every word of [first_word, +read_all)). 1: a step
    // was made; 0: all done; -1: a read failed.
    auto write_then_read = [&](int write_state, int read_state, uint64_t read_all = 0) -> int {
      if (t.state == write_state) {
        if (t.i == t.touch.size()) {
          if (read_all) {
            t.touch.clear();
            for (uint64_t k = 0; k < read_all; ++k) t.touch.push_back(k);
          }
          t.i = 0;
          t.state = read_state;
          return 1;
        }
        uint64_t word = t.first_word + t.touch[t.i], v = ++next_value;
        if (!sim_store(node, word, v, t.w)) return t.waiting = true, 1;
        shadow[word] = v;
        t.i++;
        return 1;
      }
      if (t.i == t.touch.size()) return 0;
      uint64_t word = t.first_word + t.touch[t.i], v = 0;
      if (!sim_load(node, word, t.w, &v)) return t.waiting = true, 1;
      if (v != shadow[word]) {
        fail("node " + std::to_string(t.node) + " read word " + std::to_string(word) + ": saw " + std::to_string(v) +
             ", latest write " + std::to_string(shadow[word]));
        return -1;
      }
      t.i++;
      return 1;
    };
    auto choose_touch = [&](uint64_t words) {
      t.touch.clear();
      for (uint64_t k = 0; k < words; ++k)
        if (rng() % 2) t.touch.push_back(k);
      t.i = 0;
    };

    switch (t.jobs[t.job]) {
      case Job::Placed:
        switch (t.state) {
          case 0: {
            t.run_pages = 1 + rng() % 3;
            Placement placement = (Placement)(rng() % 3);
            t.req.w.reset();
            t.req.first = UINT64_MAX;
            t.state = 1;
            node.memory().placed_alloc(t.run_pages, placement, (Rank)(rng() % o.nodes), &t.req);
            return true;
          }
          case 1:
            if (!t.req.w.done()) return false;
            if (t.req.w.status == MemoryService::kNoMemory) {
              result.placed_refused++;
              return next_job();
            }
            if (t.req.w.status != 0)
              return fail("placed allocation failed with " + std::to_string(t.req.w.status)), false;
            t.run_first = t.req.first;
            if (t.run_first < o.placed_first() || t.run_first + t.run_pages > o.placed_first() + o.placed_pages)
              return fail("placed run at page " + std::to_string(t.run_first) + " lies outside the region"), false;
            for (auto &[first, pages] : live_runs)
              if (t.run_first < first + pages && first < t.run_first + t.run_pages)
                return fail("placed run at page " + std::to_string(t.run_first) + " overlaps the live run at " +
                            std::to_string(first)),
                       false;
            live_runs[t.run_first] = t.run_pages;
            result.placed++;
            t.first_word = t.run_first * per_page;
            choose_touch(t.run_pages * per_page);
            t.state = 2;
            return true;
          case 2:
          case 3: {
            // Every word of the run reads what this thread wrote, or 0.
            int r = write_then_read(2, 3, t.run_pages * per_page);
            if (r < 0) return false;
            if (r > 0) return true;
            live_runs.erase(t.run_first);  // the free is on its way: another run may reuse the pages
            for (uint64_t k = 0; k < t.run_pages * per_page; ++k) shadow[t.first_word + k] = 0;
            t.req.w.reset();
            t.state = 4;
            node.memory().placed_free(t.run_first, &t.req);
            return true;
          }
          case 4:
            if (!t.req.w.done()) return false;
            if (t.req.w.status != 0) return fail("placed free failed with " + std::to_string(t.req.w.status)), false;
            return next_job();
        }
        break;
      case Job::Produce:
        switch (t.state) {
          case 0: {
            uint64_t bytes = 8 * (1 + rng() % 12);
            uint64_t offset = node.arena().allocate(bytes);
            if (offset == UINT64_MAX) return next_job();  // the arena is full: fine
            t.block = {t.node, offset, bytes / 8};
            t.first_word = offset / 8;
            t.touch.clear();
            for (uint64_t k = 0; k < t.block.words; ++k) t.touch.push_back(k);
            t.i = 0;
            t.state = 1;
            return true;
          }
          case 1:
          case 2: {
            int r = write_then_read(1, 2);
            if (r < 0) return false;
            if (r > 0) return true;
            t.w.reset();
            t.waiting = true;
            t.state = 3;
            node.locks().acquire(mailbox_lock, ti, &t.w);
            return true;
          }
          case 3:
            mailbox.push_back(t.block);
            node.locks().release(mailbox_lock, ti);
            return next_job();
        }
        break;
      case Job::Consume:
        switch (t.state) {
          case 0:
            t.w.reset();
            t.waiting = true;
            t.state = 1;
            node.locks().acquire(mailbox_lock, ti, &t.w);
            return true;
          case 1: {
            bool got = !mailbox.empty();
            if (got) {
              t.block = mailbox.front();
              mailbox.pop_front();
            }
            node.locks().release(mailbox_lock, ti);
            if (!got) return next_job();
            t.first_word = t.block.offset / 8;
            t.touch.clear();
            for (uint64_t k = 0; k < t.block.words; ++k) t.touch.push_back(k);
            t.i = 0;
            t.state = 3;  // read the producer's words first
            return true;
          }
          case 3: {  // read the producer's words, then write and read back some
            int r = write_then_read(-1, 3);
            if (r < 0) return false;
            if (r > 0) return true;
            choose_touch(t.block.words);
            t.state = 5;
            return true;
          }
          case 5:
          case 6: {
            int r = write_then_read(5, 6);
            if (r < 0) return false;
            if (r > 0) return true;
            t.state = 7;
            if (t.block.owner == t.node) {
              result.local_frees++;
              if (node.arena().release(t.block.offset) != ArenaAllocator::FreeResult::Ok)
                return fail("local free of a live block refused"), false;
              return next_job();
            }
            result.remote_frees++;
            t.w.reset();
            t.waiting = true;
            node.memory().free_remote(t.block.owner, t.block.offset, &t.w);
            return true;
          }
          case 7:
            if (t.w.status != 0) return fail("remote free failed with " + std::to_string(t.w.status)), false;
            return next_job();
        }
        break;
    }
    return false;
  };

  Schedule schedule;
  schedule.threads = workers.size();
  schedule.step = step;
  schedule.finished = [&](size_t i) { return workers[i].done; };
  schedule.ok = [&] { return result.ok; };
  schedule.fail = fail;
  run_schedule(cluster, schedule, &steps);
  while (result.ok && cluster.deliver_one()) {
  }
  if (!result.ok) return result;
  // Everything freed exactly once: the blocks left in the mailbox free at
  // their owners, and then every arena is whole; no placed run is live.
  for (const Block &b : mailbox)
    if (cluster.node(b.owner).arena().release(b.offset) != ArenaAllocator::FreeResult::Ok)
      fail("a block left in the mailbox was already free");
  for (Rank n = 0; n < o.nodes && result.ok; ++n) {
    if (cluster.node(n).arena().bytes_free() != o.arena_pages * o.page_size)
      fail("node " + std::to_string(n) + "'s arena has " + std::to_string(cluster.node(n).arena().bytes_free()) +
           " bytes free after every block was freed");
    for (PageId p = o.placed_first(); p < o.placed_first() + o.placed_pages && result.ok; ++p)
      if (cluster.node(n).home_of(p) != -1)
        fail("placed page " + std::to_string(p) + " still live on node " + std::to_string(n));
  }
  if (result.ok && cluster.node(0).memory().placed_in_flight() != 0)
    fail("the sequencer still has operations in flight");
  return result;
}

void run_seeds(const std::string &protocol) {
  const SeedRange range = sim_seeds(2000);
  const uint64_t seeds = range.count;
  uint64_t placed = 0, remote = 0;
  for (uint64_t seed = range.first; seed < range.end(); ++seed) {
    Result r = run_memory(options_for(seed, protocol));
    ASSERT_TRUE(r.ok) << r.failure << "\nreplay: AGORA_SIM_SEED=" << seed
                      << " ./sim_tests --gtest_filter='SimMemory.*'";
    placed += r.placed;
    remote += r.remote_frees;
  }
  EXPECT_GT(placed, seeds);
  EXPECT_GT(remote, seeds / 2);
}

}  // namespace

TEST(SimMemory, PlacedAllocationsAndRemoteFreesUnderSc) { run_seeds("sc"); }
TEST(SimMemory, PlacedAllocationsAndRemoteFreesUnderHlrc) { run_seeds("hlrc"); }
TEST(SimMemory, PlacedAllocationsAndRemoteFreesUnderRegc) { run_seeds("regc"); }
TEST(SimMemory, PlacedAllocationsAndRemoteFreesUnderRegcPage) { run_seeds("regc-page"); }

TEST(SimMemory, CheckerCatchesARemoteFreeThatSkipsTheRelease) {
  // Remote frees only: a placed free that skips it ends the run at once
  // (hlrc: "malformed diff" of a page its home forgot), which says nothing
  // about the checker.
  int caught = 0, first_caught = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SimOptions o = options_for(seed, "hlrc");
    o.service_fault = SimOptions::ServiceFault::FreeSkipsRelease;
    if (!run_memory(o, false).ok && caught++ == 0) first_caught = (int)seed;
  }
  std::printf("[ fault    ] hlrc: FreeSkipsRelease caught on %d of 200 seeds (first: seed %d)\n", caught, first_caught);
  EXPECT_GT(caught, 10);
}

// The error paths, directed: what the runtime reports as agora_free and
// agora_malloc_placed errors comes back as these statuses.
TEST(SimMemory, FreeAndPlacedErrors) {
  SimOptions o = options_for(1, "hlrc");
  o.nodes = 3;
  SimCluster cluster(o);
  auto settle = [&] {
    while (cluster.deliver_one()) {
    }
  };
  SimNode &owner = cluster.node(1), &other = cluster.node(2);
  uint64_t block = owner.arena().allocate(100);
  ASSERT_NE(block, UINT64_MAX);
  Waiter w;
  other.memory().free_remote(1, block + 8, &w);  // inside the block
  settle();
  ASSERT_TRUE(w.done());
  EXPECT_EQ(w.status, -5);
  w.reset();
  other.memory().free_remote(1, block, &w);
  settle();
  EXPECT_EQ(w.status, 0);
  w.reset();
  other.memory().free_remote(1, block, &w);  // double free
  settle();
  EXPECT_EQ(w.status, -5);

  PlacedRequest big, run, inside, again;
  other.memory().placed_alloc(o.placed_pages + 1, Placement::Block, 0, &big);
  settle();
  EXPECT_EQ(big.w.status, MemoryService::kNoMemory);
  EXPECT_EQ(big.free_pages, o.placed_pages);
  other.memory().placed_alloc(3, Placement::Cyclic, 0, &run);
  settle();
  ASSERT_EQ(run.w.status, 0);
  for (PageId p = run.first; p < run.first + 3; ++p)
    for (Rank n = 0; n < o.nodes; ++n) EXPECT_EQ(cluster.node(n).home_of(p), (Rank)((p - run.first) % 3));
  other.memory().placed_free(run.first + 1, &inside);
  settle();
  EXPECT_EQ(inside.w.status, MemoryService::kInsideRun);
  other.memory().placed_free(run.first, &again);
  settle();
  EXPECT_EQ(again.w.status, 0);
  again.w.reset();
  other.memory().placed_free(run.first, &again);  // double free
  settle();
  EXPECT_EQ(again.w.status, MemoryService::kBadPointer);
}
