// agora_flush in the simulator (docs/flush.md), under hlrc, regc and
// regc-page, with the observer model and the basic flush, over many seeds.
//
// Three nodes run Wong & Rendell's busy-wait (figure 6) with `data` and `flag` on
// pages whose homes the seed picks (different homes, the same home, or the
// flusher's own node, so that every one of the five cases occurs):
//  - the producer, for each round r: data = r; flush(data); flag = r; flush(flag);
//  - the consumer spins: flush(flag); read flag; on a new value k:
//    flush(data); read data, which must be at least k (the shadow model:
//    a write flushed before the write of `flag` a flush has shown is seen
//    by the next flush of `data`), and never less than the last it read;
//  - a third node writes its own word of `data`'s page (false sharing),
//    flushes it, spins on `flag` like the consumer, and flushes everything.
// At the end every node flushes everything and must read the latest value
// of every word. The network reorders messages between different pairs of
// nodes; the consumer spinning on a notice that never comes is a livelock
// the scheduler reports.
//
// Mutation: a home that completes a flush without waiting for its change
// notices to be acknowledged (EngineOptions::flush_skips_acks) lets the
// notice for `flag` overtake the one for `data`; the checker must catch it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "protocol/shared/flush_observers.h"
#include "sim/sim_access.h"
#include "sim/sim_scheduler.h"
#include "sim/sim_seeds.h"

using namespace agora;
using namespace agora::simtest;

namespace {

constexpr size_t kPages = 6;
constexpr size_t kPageSize = 64;
constexpr uint64_t kPerPage = kPageSize / 8;

// Steps parties 0..parties-1 in a random order, delivering a message between
// steps half the time, until all_done() or a failure (ok() false), as
// run_schedule does, except that a slow link's messages, when they are all
// that is in flight, wait while a party can step (15 times in 16). A party
// that never finishes, or a state where none can step and nothing is in
// flight, is reported through fail.
template <class Step, class AllDone, class Ok, class Fail>
void step_with_slow_link(SimCluster &cluster, size_t parties, uint64_t max_steps, const std::string &livelock,
                         Step step, AllDone all_done, Ok ok, Fail fail) {
  auto &rng = cluster.rng();
  uint64_t steps = 0;
  while (ok() && !all_done()) {
    if (++steps > max_steps) {
      fail("no completion after " + std::to_string(max_steps) + " steps (livelock: " + livelock + ")");
      return;
    }
    const bool only_slow = cluster.in_flight() && cluster.in_flight() == cluster.slow_in_flight();
    bool progressed = false;
    if (cluster.in_flight() && rng() % 2 == 0 && (!only_slow || rng() % 16 == 0)) progressed = cluster.deliver_one();
    if (!progressed) {
      const size_t start = rng() % parties;
      for (size_t k = 0; k < parties && !progressed && ok(); ++k) progressed = step((start + k) % parties);
    }
    if (!progressed && ok() && !cluster.deliver_one()) fail("deadlock: no thread can run and no message is in flight");
  }
}

// Delivers every message in flight.
void settle(SimCluster &cluster) {
  while (cluster.deliver_one()) {
  }
}

struct Case {
  std::string protocol;
  FlushMode mode;
  bool skip_acks = false;
  bool skip_rounds = false;
};

struct Thread {
  Rank node = 0;
  int role = 0;  // 0 producer, 1 consumer, 2 third
  int pc = 0;
  bool waiting = false;
  bool done = false;
  Waiter w;
  uint64_t round = 0, seen_flag = 0, last_data = 0, value = 0, iterations = 0, acked = 0, pair_flag = 0;
  bool pair_checked = false;
};

struct Outcome {
  bool ok = true;
  uint64_t pair_checks = 0;  // one-flush flag-and-data reads checked
  std::string failure;
  Stats stats;
};

uint64_t mix(uint64_t x) {  // splitmix64's finaliser: choices independent of the seed's residues
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// What a seed picks: data's and flag's pages (so their homes, (page + seed)
// % 3), the rounds, and the slow link (from, to), if any.
struct Layout {
  PageId data, flag;
  uint64_t rounds;
  bool third_active;
  Rank slow_from, slow_to;
};
// Homes of the pages are the cluster's (cyclic, shifted by the seed); the
// seed picks the homes of data and flag (any two nodes, or one), then pages.
Layout layout_for(uint64_t seed, const SimCluster &cluster) {
  uint64_t h = mix(seed);
  const Rank data_home = (Rank)(h % 3), flag_home = (Rank)((h >> 8) % 3);
  Layout l{};
  auto page_homed = [&](Rank home, PageId not_this) {
    for (PageId p = 0; p < kPages; ++p)
      if (p != not_this && const_cast<SimCluster &>(cluster).node(0).home_of(p) == home) return p;
    return (PageId)0;
  };
  l.data = page_homed(data_home, kPages);
  l.flag = page_homed(flag_home, l.data);
  l.rounds = 2 + (h >> 16) % 6;
  l.third_active = (h >> 48) % 2;
  l.slow_from = l.slow_to = -1;
  const unsigned slow = (h >> 24) % 4;
  if (slow == 1 && data_home != 1) {
    // data's notices to the consumer are late: the case the acks are for.
    l.slow_from = data_home;
    l.slow_to = 1;
  } else if (slow != 0) {  // any other link
    l.slow_from = (Rank)((h >> 32) % 3);
    l.slow_to = (Rank)((l.slow_from + 1 + (h >> 40) % 2) % 3);
  }
  return l;
}

Outcome run_flush(uint64_t seed, const Case &c) {
  SimOptions o;
  o.nodes = 3;
  o.pages = kPages;
  o.page_size = kPageSize;
  o.seed = seed;
  o.protocol = c.protocol;
  o.application_threads = 1;
  o.engine.flush = c.mode;
  o.engine.flush_skips_acks = c.skip_acks;
  o.engine.flush_skips_rounds = c.skip_rounds;
  SimCluster cluster(o);
  auto &rng = cluster.rng();
  // Most seeds slow one link down (an ordered pair of nodes), so that
  // messages of other pairs overtake its messages by many steps.
  const Layout l = layout_for(seed, cluster);
  if (l.slow_from >= 0) cluster.set_slow_pair(l.slow_from, l.slow_to);
  Outcome out;
  auto fail = [&](const std::string &why) {
    if (!out.ok) return;
    out.ok = false;
    std::ostringstream s;
    s << c.protocol << (c.mode == FlushMode::Basic ? " basic" : " observer") << " seed " << seed << ": " << why;
    out.failure = s.str();
  };
  const uint64_t data_word = l.data * kPerPage, third_word = l.data * kPerPage + 1, flag_word = l.flag * kPerPage;
  const uint64_t rounds = l.rounds;
  // The consumer acknowledges each round in flag's page (false sharing with
  // flag), and the producer waits for it: every round is checked.
  const uint64_t ack_word = flag_word + 1;
  const bool third_active = l.third_active;
  uint64_t third_latest = 0;
  uint64_t pair_checks = 0;

  std::vector<Thread> threads(3);
  for (int i = 0; i < 3; ++i) {
    threads[i].node = i;
    threads[i].role = i;
  }
  auto range_of = [&](uint64_t word, bool whole) {
    PageId page = word / kPerPage;
    return whole ? StoreRange{page, 0, (uint32_t)kPageSize} : StoreRange{page, (uint32_t)(word % kPerPage * 8), 8};
  };
  auto start_flush = [&](Thread &t, std::vector<StoreRange> ranges) {
    t.w.reset();
    t.waiting = true;
    Waiter *w = &t.w;
    cluster.node(t.node).engine().flush(ranges, [w] { w->complete(0); });
  };
  auto start_flush_all = [&](Thread &t) {
    t.w.reset();
    t.waiting = true;
    Waiter *w = &t.w;
    cluster.node(t.node).engine().flush_all([w] { w->complete(0); });
  };
  // A load or store: false (and the thread waits) if it faulted.
  auto load = [&](Thread &t, uint64_t word, uint64_t *v) {
    if (sim_load(cluster.node(t.node), word, t.w, v)) return true;
    t.waiting = true;
    return false;
  };
  auto store = [&](Thread &t, uint64_t word, uint64_t v) {
    if (sim_store(cluster.node(t.node), word, v, t.w)) return true;
    t.waiting = true;
    return false;
  };
  // The reader's check after a flush of `flag` showed k: flush(data), read.
  auto check_data = [&](Thread &t, uint64_t v) {
    if (v < t.seen_flag)
      fail("node " + std::to_string(t.node) + " saw flag " + std::to_string(t.seen_flag) + " but then data " +
           std::to_string(v) + " after flushing it");
    if (v < t.last_data)
      fail("node " + std::to_string(t.node) + " read data " + std::to_string(v) + " after " +
           std::to_string(t.last_data) + " (a flush went back in time)");
    t.last_data = v;
  };

  Schedule s;
  s.threads = 3;
  s.ok = [&] { return out.ok; };
  s.fail = fail;
  s.finished = [&](size_t i) { return threads[i].done; };
  s.step = [&](size_t i) -> bool {
    Thread &t = threads[i];
    if (t.done) return false;
    if (t.waiting) {
      if (!t.w.done()) return false;
      t.waiting = false;
      if (t.w.status != 0) fail("an access failed with status " + std::to_string(t.w.status));
    }
    uint64_t v = 0;
    if (t.role == 0) {  // producer
      switch (t.pc) {
        case 0:
          if (t.round == rounds) {
            t.done = true;
            return true;
          }
          if (store(t, data_word, t.round + 1)) t.pc = 1;
          return true;
        case 1:
          start_flush(t, {range_of(data_word, rng() % 4 == 0)});
          t.pc = 2;
          return true;
        case 2:
          if (store(t, flag_word, t.round + 1)) t.pc = 3;
          return true;
        case 3:
          start_flush(t, {range_of(flag_word, rng() % 4 == 0)});
          t.round++;
          t.pc = 4;
          return true;
        case 4:
          start_flush(t, {range_of(ack_word, rng() % 4 == 0)});
          t.pc = 5;
          return true;
        case 5:
          if (!load(t, ack_word, &v)) return true;
          t.pc = v >= t.round ? 0 : 4;
          return true;
      }
    }
    // Consumer and third node: spin on flag, then check data.
    switch (t.pc) {
      case 0:
        if (t.role == 1 && t.seen_flag == rounds) {
          t.done = true;
          return true;
        }
        if (t.role == 2) {
          if (!third_active || t.iterations++ == 30) {
            t.done = true;
            return true;
          }
          unsigned choice = rng() % 4;
          if (choice == 0) {  // write its own word of data's page and flush it
            t.pc = 10;
            return true;
          }
          if (choice == 1) {
            start_flush_all(t);
            return true;
          }
        } else if (rng() % 4 == 0) {
          // An unflushed read: keeps a copy around (CASE-2/3 later), checks nothing.
          if (!load(t, data_word, &v)) return true;
        }
        // The third node (which lags: nobody waits for it) and the consumer
        // sometimes flush both at once.
        if (rng() % 3 == 0) {
          // One flush of flag and data together, as OpenMP orders flushes
          // with common items: if the flag it shows comes from the flush
          // itself (hlrc's refreshed copy; not a home page or a page fetched
          // at the read, which show later writes too), the data it shows is
          // at least as new. (The basic flush refreshes pages independently.)
          SimNode &node = cluster.node(t.node);
          t.pair_checked = c.protocol == "hlrc" && c.mode == FlushMode::Observer && node.home_of(l.flag) != t.node &&
                           node.access(l.flag) >= Access::Read;
          start_flush(t, {range_of(flag_word, rng() % 2 == 0), range_of(data_word, rng() % 2 == 0)});
          t.pc = 20;
          return true;
        }
        start_flush(t, {range_of(flag_word, rng() % 4 == 0)});
        t.pc = 1;
        return true;
      case 1:
        if (!load(t, flag_word, &v)) return true;
        if (v < t.seen_flag)
          fail("node " + std::to_string(t.node) + " read flag " + std::to_string(v) + " after " +
               std::to_string(t.seen_flag));
        if (v > t.seen_flag) {
          t.seen_flag = v;
          t.pc = 2;
        } else {
          t.pc = 0;
        }
        return true;
      case 2:
        start_flush(t, {range_of(data_word, rng() % 4 == 0)});
        t.pc = 3;
        return true;
      case 3:
        if (!load(t, data_word, &v)) return true;
        check_data(t, v);
        t.pc = t.role == 1 ? 4 : 0;
        return true;
      case 4:
        if (store(t, ack_word, t.seen_flag)) {
          t.acked = t.seen_flag;
          t.pc = 5;
        }
        return true;
      case 5:
        start_flush(t, {range_of(ack_word, rng() % 4 == 0)});
        t.pc = 0;
        return true;
      case 20:
        if (!load(t, flag_word, &v)) return true;
        t.pair_flag = v;
        t.pc = 21;
        return true;
      case 21:
        if (!load(t, data_word, &v)) return true;
        if (t.pair_checked && v < t.pair_flag)
          fail("node " + std::to_string(t.node) + ": one flush of flag and data showed flag " +
               std::to_string(t.pair_flag) + " and data " + std::to_string(v));
        if (t.pair_checked) {
          if (t.pair_flag > t.seen_flag) t.seen_flag = t.pair_flag;
          check_data(t, v);
          pair_checks++;
        }
        t.pc = t.role == 1 && t.seen_flag > t.acked ? 4 : 0;
        return true;
      case 10:
        if (store(t, third_word, t.value + 1)) {
          t.value++;
          third_latest = t.value;
          t.pc = 11;
        }
        return true;
      case 11:
        start_flush(t, {range_of(third_word, rng() % 2 == 0)});
        t.pc = 0;
        return true;
    }
    fail("bad program counter");
    return false;
  };
  step_with_slow_link(
      cluster, 3, 400'000, "a notice lost?", [&](size_t i) { return s.step(i); },
      [&] { return threads[0].done && threads[1].done && threads[2].done; }, [&] { return out.ok; }, fail);
  settle(cluster);
  // Every node flushes everything, then reads the latest of every word.
  for (int n = 0; n < 3 && out.ok; ++n) {
    Thread &t = threads[n];
    t.done = false;
    start_flush_all(t);
    settle(cluster);
    if (!t.w.done()) fail("flush_all never completed on node " + std::to_string(n));
    const uint64_t words[4] = {data_word, third_word, flag_word, ack_word};
    const uint64_t want[4] = {rounds, third_latest, rounds, rounds};
    for (int k = 0; k < 4 && out.ok; ++k) {
      uint64_t v = 0;
      while (!sim_load(cluster.node(n), words[k], t.w, &v)) settle(cluster);
      if (v != want[k])
        fail("after flush_all node " + std::to_string(n) + " reads " + std::to_string(v) + " at word " +
             std::to_string(words[k]) + ", the latest flushed is " + std::to_string(want[k]));
    }
  }
  for (int n = 0; n < 3; ++n) out.stats.combine(cluster.node(n).stats());
  out.pair_checks = pair_checks;
  return out;
}

// Runs `seeds` seeds per case; returns the combined stats, fails on the first failure.
uint64_t g_pair_checks = 0;  // over the last run_cases

Stats run_cases(const std::vector<Case> &cases, uint64_t seeds) {
  Stats total;
  g_pair_checks = 0;
  const SeedRange range = sim_seeds(seeds);
  seeds = range.count;
  const uint64_t first = range.first;
  for (const Case &c : cases) {
    for (uint64_t seed = first; seed < first + seeds; ++seed) {
      Outcome r = run_flush(seed, c);
      if (!r.ok) {
        ADD_FAILURE() << r.failure << " (replay: AGORA_SIM_SEED=" << seed << ")";
        return total;
      }
      total.combine(r.stats);
      g_pair_checks += r.pair_checks;
    }
  }
  return total;
}

TEST(SimFlush, ObserverModelHlrcOverManySeeds) {
  Stats t = run_cases({{"hlrc", FlushMode::Observer}}, 1500);
  // Every one of the five cases occurred, and the observer machinery ran.
  EXPECT_GT(t.flush_case1_diffs, 0u);
  EXPECT_GT(t.flush_case2_refreshes, 0u);
  EXPECT_GT(t.flush_case3_skips, 0u);
  EXPECT_GT(t.flush_case4_home_unchanged, 0u);
  EXPECT_GT(t.flush_case5_home_changed, 0u);
  EXPECT_GT(t.flush_unmapped, 0u);
  EXPECT_GT(t.change_notices_sent, 0u);
  EXPECT_EQ(t.change_notices_sent, t.notice_acks_received);
  // One flush of flag and data was checked, and flushes of both were
  // repeated because a notice came meanwhile.
  EXPECT_GT(g_pair_checks, 0u);
  EXPECT_GT(t.flush_rounds_repeated, 0u);
  std::printf("hlrc: %llu one-flush flag-and-data reads checked, %llu flushes repeated a round\n",
              (unsigned long long)g_pair_checks, (unsigned long long)t.flush_rounds_repeated);
}

TEST(SimFlush, ObserverModelRegcOverManySeeds) {
  Stats t = run_cases({{"regc", FlushMode::Observer}, {"regc-page", FlushMode::Observer}}, 1000);
  EXPECT_GT(t.flush_case1_diffs, 0u);
  EXPECT_GT(t.flush_case2_refreshes, 0u);
  EXPECT_GT(t.flush_case3_skips, 0u);
  EXPECT_GT(t.flush_case5_home_changed, 0u);
  EXPECT_EQ(t.change_notices_sent, t.notice_acks_received);
}

TEST(SimFlush, BasicFlushOverManySeeds) {
  Stats t = run_cases({{"hlrc", FlushMode::Basic}, {"regc", FlushMode::Basic}, {"regc-page", FlushMode::Basic}}, 600);
  // The basic flush never skips a copy and never sends a notice.
  EXPECT_EQ(t.flush_case2_refreshes + t.flush_case3_skips + t.change_notices_sent, 0u);
  EXPECT_GT(t.flush_case1_diffs, 0u);
}

// How many of `seeds` seeds catch a flush that does not wait for acks.
int caught_without_acks(const std::string &protocol, uint64_t seeds) {
  int caught = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed)
    if (!run_flush(seed, {protocol, FlushMode::Observer, true}).ok) ++caught;
  return caught;
}

TEST(SimFlush, CheckerCatchesMultiPageFlushThatIsNotAtomic) {
  const uint64_t seeds = sim_seed_count(1500);
  int caught = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed)
    if (!run_flush(seed, {"hlrc", FlushMode::Observer, false, true}).ok) ++caught;
  std::printf("multi-page flush without repeated rounds (hlrc): caught on %d of %llu seeds\n", caught,
              (unsigned long long)seeds);
  EXPECT_GT(caught, 0);
}

TEST(SimFlush, CheckerCatchesFlushWithoutAcks) {
  const uint64_t seeds = sim_seed_count(1500);
  for (const char *protocol : {"hlrc", "regc"}) {
    int caught = caught_without_acks(protocol, seeds);
    std::printf("flush without acks (%s): caught on %d of %llu seeds\n", protocol, caught, (unsigned long long)seeds);
    EXPECT_GT(caught, 0) << protocol;
  }
}

}  // namespace
namespace {

// Wong & Rendell's synthetic benchmark (§IV-C, table IV), run to completion one
// operation at a time: the flush messages of each phase, exactly.
struct PhaseCounts {
  // Messages received by the home and by the remote node, by op.
  std::map<uint16_t, uint64_t> home, remote;
};

std::vector<PhaseCounts> run_table_iv(const std::string &protocol, FlushMode mode, uint64_t n, bool one_sided = false) {
  SimOptions o;
  o.one_sided = o.track_home_writes = one_sided;
  o.nodes = 2;
  o.pages = 1;
  o.page_size = kPageSize;
  o.seed = 1;
  o.protocol = protocol;
  o.application_threads = 1;
  o.engine.flush = mode;
  SimCluster cluster(o);
  const Rank home = cluster.node(0).home_of(0), remote = 1 - home;
  std::vector<PhaseCounts> phases(4);
  size_t phase = 0;
  cluster.observe_posts([&](Rank src, Rank dst, const MsgHeader &m) {
    (void)src;
    if (FlushObservers::handles(m.op)) (dst == home ? phases[phase].home : phases[phase].remote)[m.op]++;
  });
  Waiter w;
  auto flush_x = [&](Rank r) {
    w.reset();
    cluster.node(r).engine().flush({{0, 0, 8}}, [&w] { w.complete(0); });
    settle(cluster);
    EXPECT_TRUE(w.done());
  };
  auto load_x = [&](Rank r) {
    uint64_t v = 0;
    while (!sim_load(cluster.node(r), 0, w, &v)) settle(cluster);
    return v;
  };
  auto store_x = [&](Rank r, uint64_t v) {
    while (!sim_store(cluster.node(r), 0, v, w)) settle(cluster);
  };
  store_x(home, 0);  // phase 0
  phase = 1;
  for (uint64_t i = 0; i < n; ++i) flush_x(remote);  // the page is not mapped: nothing
  const uint64_t y = load_x(remote);
  for (uint64_t i = 0; i < n; ++i) flush_x(remote);
  phase = 2;
  for (uint64_t i = 0; i < n; ++i) {
    store_x(home, load_x(home) + 1);
    flush_x(home);
  }
  phase = 3;
  uint64_t flushes = 0;
  while (load_x(remote) == y) {
    flush_x(remote);
    if (++flushes > 2) break;
  }
  EXPECT_EQ(load_x(remote), n);
  return phases;
}

TEST(SimFlush, PaperTableIVCountsExactly) {
  using F = FlushObservers;
  const uint64_t n = 10000;
  for (const char *protocol : {"hlrc", "regc"}) {
    SCOPED_TRACE(protocol);
    if (std::string(protocol) == "hlrc") {
      auto os = run_table_iv(protocol, FlushMode::Observer, 100, true);
      EXPECT_EQ(os[1].home, (std::map<uint16_t, uint64_t>{{F::kRefreshRequest, 1}})) << "one-sided";
    }
    // Observer: phase 1 one refresh (CASE-2, then CASE-3), phase 2 one
    // change notice and its ack (CASE-5), phase 3 one refresh.
    auto ob = run_table_iv(protocol, FlushMode::Observer, n);
    EXPECT_EQ(ob[1].home, (std::map<uint16_t, uint64_t>{{F::kRefreshRequest, 1}}));
    EXPECT_EQ(ob[1].remote, (std::map<uint16_t, uint64_t>{{F::kRefresh, 1}}));
    EXPECT_EQ(ob[2].home, (std::map<uint16_t, uint64_t>{{F::kNoticeAck, 1}}));
    EXPECT_EQ(ob[2].remote, (std::map<uint16_t, uint64_t>{{F::kChangeNotice, 1}}));
    if (std::string(protocol) == "hlrc") {
      EXPECT_EQ(ob[3].home, (std::map<uint16_t, uint64_t>{{F::kRefreshRequest, 1}}));
      EXPECT_EQ(ob[3].remote, (std::map<uint16_t, uint64_t>{{F::kRefresh, 1}}));
    } else {
      // regc's refresh invalidates the copy: phase 3's read fetches the page
      // and sees the change without a flush.
      EXPECT_TRUE(ob[3].home.empty() && ob[3].remote.empty());
    }
    // Basic: a diff (empty) and a refresh per flush of a mapped remote
    // page (hlrc: every one of the 10000; regc: the refresh invalidates, so
    // only the first finds a copy), nothing for the home's own flushes.
    auto basic = run_table_iv(protocol, FlushMode::Basic, n);
    const uint64_t phase1 = std::string(protocol) == "hlrc" ? n : 1;
    EXPECT_EQ(basic[1].home, (std::map<uint16_t, uint64_t>{{F::kFlushDiff, phase1}}));
    EXPECT_EQ(basic[1].remote, (std::map<uint16_t, uint64_t>{{F::kRefresh, phase1}}));
    EXPECT_TRUE(basic[2].home.empty() && basic[2].remote.empty());
    if (std::string(protocol) == "hlrc") {
      EXPECT_EQ(basic[3].home, (std::map<uint16_t, uint64_t>{{F::kFlushDiff, 1}}));
      EXPECT_EQ(basic[3].remote, (std::map<uint16_t, uint64_t>{{F::kRefresh, 1}}));
    }
  }
}

}  // namespace
namespace {

// tests/mpi/flush.c's flush_all_slots in the simulator: every node homes a
// slot page and reads every slot page once by a plain read fault (a copy
// it never flushed, by message or one-sided read), then writes its own
// slot (a home write), flush_all, sets its word of a `ready` page homed at
// a node the seed picks, flush_all; then, for every node q, spins
// flush_all until ready[q], flushes all again and reads slot q, which must
// be q's value (the shadow model: the slot's write was flushed before the
// ready word's). A reader that refreshed the slot page before its home
// wrote it observes it, so the home's flush_all must see its own change
// (CASE-5) and notify it, even though no fetch by message ever made the
// home keep state for the page (one-sided reads leave none).
struct SlotsOutcome {
  bool ok = true;
  std::string failure;
  Stats stats;
};

SlotsOutcome run_flush_all_slots(uint64_t seed, bool one_sided) {
  constexpr int kNodes = 3;
  SimOptions o;
  o.nodes = kNodes;
  o.pages = kPages;
  o.page_size = kPageSize;
  o.seed = seed;
  o.protocol = "hlrc";
  o.application_threads = 1;
  o.one_sided = o.track_home_writes = one_sided;
  o.engine.flush = FlushMode::Observer;
  SimCluster cluster(o);
  auto &rng = cluster.rng();
  SlotsOutcome out;
  auto fail = [&](const std::string &why) {
    if (!out.ok) return;
    out.ok = false;
    out.failure = std::string(one_sided ? "one-sided" : "messages") + " seed " + std::to_string(seed) + ": " + why;
  };
  // slot[r]: the first page homed at r; ready: another page, homed where the seed says.
  PageId slot[kNodes];
  const Rank ready_home = (Rank)(mix(seed) % kNodes);
  PageId ready = kPages;
  for (Rank r = 0; r < kNodes; ++r) {
    slot[r] = kPages;
    for (PageId p = 0; p < kPages; ++p)
      if (cluster.node(0).home_of(p) == r) {
        if (slot[r] == kPages)
          slot[r] = p;
        else if (r == ready_home && ready == kPages)
          ready = p;
      }
  }
  if (ready == kPages) {
    fail("no page for ready");
    return out;
  }
  auto value_of = [](Rank r) { return 777 + (uint64_t)r; };
  struct Node {
    int pc = 0;
    int q = 0;  // the slot being read (pc 0) or waited for (pc 5..)
    bool waiting = false, done = false;
    Waiter w;
  };
  std::vector<Node> nodes(kNodes);
  auto flush_all = [&](Rank r) {
    Node &t = nodes[r];
    t.w.reset();
    t.waiting = true;
    Waiter *w = &t.w;
    cluster.node(r).engine().flush_all([w] { w->complete(0); });
  };
  auto load = [&](Rank r, uint64_t word, uint64_t *v) {
    if (sim_load(cluster.node(r), word, nodes[r].w, v)) return true;
    nodes[r].waiting = true;
    return false;
  };
  auto store = [&](Rank r, uint64_t word, uint64_t v) {
    if (sim_store(cluster.node(r), word, v, nodes[r].w)) return true;
    nodes[r].waiting = true;
    return false;
  };
  auto step = [&](Rank r) -> bool {
    Node &t = nodes[r];
    if (t.done) return false;
    if (t.waiting) {
      if (!t.w.done()) return false;
      t.waiting = false;
    }
    uint64_t v = 0;
    switch (t.pc) {
      case 0:  // read every slot page once: a copy to observe
        if (t.q == kNodes) {
          t.pc = 1;
          return true;
        }
        if (load(r, slot[t.q] * kPerPage, &v)) t.q++;
        return true;
      case 1:
        if (store(r, slot[r] * kPerPage, value_of(r))) t.pc = 2;
        return true;
      case 2:
        flush_all(r);
        t.pc = 3;
        return true;
      case 3:
        if (store(r, ready * kPerPage + 1 + r, 1)) t.pc = 4;
        return true;
      case 4:
        flush_all(r);
        t.q = 0;
        t.pc = 5;
        return true;
      case 5:
        if (t.q == kNodes) {
          t.done = true;
          return true;
        }
        flush_all(r);
        t.pc = 6;
        return true;
      case 6:
        if (!load(r, ready * kPerPage + 1 + t.q, &v)) return true;
        if (!v) {
          t.pc = 5;
          return true;
        }
        flush_all(r);  // figure 6's second flush
        t.pc = 7;
        return true;
      case 7:
        if (!load(r, slot[t.q] * kPerPage, &v)) return true;
        if (v != value_of(t.q))
          fail("node " + std::to_string(r) + " read slot of node " + std::to_string(t.q) + " as " + std::to_string(v) +
               " after flush_all, ready said it was " + std::to_string(value_of(t.q)));
        t.q++;
        t.pc = 5;
        return true;
    }
    fail("bad program counter");
    return false;
  };
  uint64_t steps = 0;
  while (out.ok) {
    bool all_done = true;
    for (const Node &t : nodes) all_done &= t.done;
    if (all_done) break;
    if (++steps > 200'000) {
      fail("no completion after 200000 steps (livelock: a notice lost?)");
      break;
    }
    bool progressed = false;
    if (cluster.in_flight() && rng() % 2 == 0) progressed = cluster.deliver_one();
    const Rank start = (Rank)(rng() % kNodes);
    for (Rank k = 0; k < kNodes && !progressed && out.ok; ++k) progressed = step((start + k) % kNodes);
    if (!progressed && out.ok && !cluster.deliver_one()) fail("deadlock: no node can run and no message is in flight");
  }
  for (Rank r = 0; r < kNodes; ++r) out.stats.combine(cluster.node(r).stats());
  return out;
}

TEST(SimFlush, FlushAllSeesHomeWritesOfPagesReadByPlainFaults) {
  const uint64_t seeds = sim_seed_count(1000);
  for (bool one_sided : {false, true}) {
    SCOPED_TRACE(one_sided ? "one-sided reads" : "reads by message");
    Stats total;
    uint64_t failed = 0;
    std::string first_failure;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      SlotsOutcome r = run_flush_all_slots(seed, one_sided);
      if (!r.ok && !failed++) first_failure = r.failure;
      total.combine(r.stats);
    }
    std::printf("flush_all slots (%s): %llu of %llu seeds failed\n", one_sided ? "one-sided" : "messages",
                (unsigned long long)failed, (unsigned long long)seeds);
    EXPECT_EQ(failed, 0u) << "first: " << first_failure;
    // The scenario occurred: home changes announced to observers that
    // refreshed before them, and (one-sided) copies read without the home.
    EXPECT_GT(total.flush_case5_home_changed, 0u);
    EXPECT_GT(total.change_notices_sent, 0u);
    EXPECT_EQ(total.change_notices_sent, total.notice_acks_received);
    if (one_sided) {
      EXPECT_GT(total.one_sided_reads, 0u);
    }
  }
}

}  // namespace
namespace {

// Several threads per node sharing the node's page copies (issue 30):
// OpenMP's message-passing idiom, as tests/mpi/flush_threads.c runs it on
// real ranks. Writer w (threads_per_node per node) owns a flag and
// kWordsPerWriter data words interleaved with every other writer's on two
// or three pages, and loops:
//     data[w][*] = r; flush(data); flag[w] = r; flush(flags);
//     pick w' != w; flush(flags); f = flag[w']; flush(data);
//     every data[w'][*] must be >= f   (the shadow model)
// so one thread's flush runs while another thread of its node writes the
// same pages, or waits for a refresh of them. The seed picks the homes, the
// number of nodes (2 or 3), the rounds and a slow link. At the end every
// node flushes everything and must read every writer's last value.
//
// Mutations: a flush that finds a page's refresh still on its way (asked
// for by another thread of its node) takes the copy as it is
// (EngineOptions::flush_skips_pending_refresh); a flush of a page whose
// fetch (another thread's miss) is outstanding lets its reply, which may
// predate the flush, be installed (flush_trusts_outstanding_fetch). The
// checker must catch both.
constexpr uint64_t kWordsPerWriter = 4;

struct Writer {
  Rank node = 0;
  int pc = 0, word = 0, other = 0;
  bool waiting = false, done = false;
  Waiter w;
  uint64_t round = 0, flag_seen = 0;
};

enum class ThreadsMutation { None, SkipPendingRefresh, TrustOutstandingFetch };

Outcome run_threads(uint64_t seed, const std::string &protocol, FlushMode mode,
                    ThreadsMutation mutation = ThreadsMutation::None) {
  const uint64_t h = mix(seed ^ 0x5eedull);
  SimOptions o;
  o.nodes = 2 + (int)(h % 2);
  o.pages = kPages;
  o.page_size = kPageSize;
  o.seed = seed;
  o.protocol = protocol;
  o.application_threads = 2;
  o.engine.flush = mode;
  o.engine.flush_skips_pending_refresh = mutation == ThreadsMutation::SkipPendingRefresh;
  o.engine.flush_trusts_outstanding_fetch = mutation == ThreadsMutation::TrustOutstandingFetch;
  SimCluster cluster(o);
  auto &rng = cluster.rng();
  const int nodes = o.nodes, writers = 2 * nodes;
  if ((h >> 8) % 4 != 0) {
    const Rank from = (Rank)((h >> 16) % nodes);
    cluster.set_slow_pair(from, (Rank)((from + 1 + (h >> 24) % (nodes - 1)) % nodes));
  }
  const uint64_t rounds = 2 + (h >> 32) % 5;
  // data: the first pages (kWordsPerWriter x writers words, interleaved);
  // flags: the next page, or the one after (another home), by the seed.
  const PageId data_pages = (kWordsPerWriter * (uint64_t)writers + kPerPage - 1) / kPerPage;
  const PageId flag_page = data_pages + (PageId)((h >> 40) % 2);
  auto data_word = [&](int w, uint64_t i) { return i * (uint64_t)writers + (uint64_t)w; };
  auto flag_word = [&](int w) { return flag_page * kPerPage + (uint64_t)w; };
  std::vector<StoreRange> data_ranges;
  for (PageId p = 0; p < data_pages; ++p) data_ranges.push_back({p, 0, (uint32_t)kPageSize});
  const std::vector<StoreRange> flag_ranges{{flag_page, 0, (uint32_t)(8 * writers)}};
  Outcome out;
  auto fail = [&](const std::string &why) {
    if (!out.ok) return;
    out.ok = false;
    out.failure = protocol + (mode == FlushMode::Basic ? " basic" : " observer") + " threads seed " +
                  std::to_string(seed) + ": " + why;
  };
  std::vector<Writer> ws(writers);
  for (int w = 0; w < writers; ++w) ws[w].node = (Rank)(w % nodes);
  auto start_flush = [&](Writer &t, const std::vector<StoreRange> &ranges) {
    t.w.reset();
    t.waiting = true;
    Waiter *w = &t.w;
    cluster.node(t.node).engine().flush(ranges, [w] { w->complete(0); });
  };
  auto load = [&](Writer &t, uint64_t word, uint64_t *v) {
    if (sim_load(cluster.node(t.node), word, t.w, v)) return true;
    t.waiting = true;
    return false;
  };
  auto store = [&](Writer &t, uint64_t word, uint64_t v) {
    if (sim_store(cluster.node(t.node), word, v, t.w)) return true;
    t.waiting = true;
    return false;
  };
  auto step = [&](size_t i) -> bool {
    Writer &t = ws[i];
    const int me = (int)i;
    if (t.done) return false;
    if (t.waiting) {
      if (!t.w.done()) return false;
      t.waiting = false;
    }
    uint64_t v = 0;
    switch (t.pc) {
      case 0:  // data[me][*] = round + 1, a word per step
        if (t.round == rounds) {
          t.done = true;
          return true;
        }
        if (store(t, data_word(me, t.word), t.round + 1) && ++t.word == (int)kWordsPerWriter) {
          t.word = 0;
          t.pc = 1;
        }
        return true;
      case 1:
        start_flush(t, data_ranges);
        t.pc = 2;
        return true;
      case 2:
        if (store(t, flag_word(me), t.round + 1)) t.pc = 3;
        return true;
      case 3:
        start_flush(t, flag_ranges);
        t.round++;
        t.other = (me + 1 + (int)(rng() % (uint64_t)(writers - 1))) % writers;
        t.pc = 4;
        return true;
      case 4:
        start_flush(t, flag_ranges);
        t.pc = 5;
        return true;
      case 5:
        if (!load(t, flag_word(t.other), &t.flag_seen)) return true;
        start_flush(t, data_ranges);
        t.pc = 6;
        return true;
      case 6:  // every data word of the other writer, a word per step
        if (!load(t, data_word(t.other, t.word), &v)) return true;
        if (v < t.flag_seen)
          fail("writer " + std::to_string(me) + " on node " + std::to_string(t.node) + " saw writer " +
               std::to_string(t.other) + "'s flag " + std::to_string(t.flag_seen) + " but then its data word " +
               std::to_string(t.word) + " = " + std::to_string(v) + " after flushing the data");
        if (++t.word == (int)kWordsPerWriter) {
          t.word = 0;
          t.pc = 0;
        }
        return true;
    }
    fail("bad program counter");
    return false;
  };
  step_with_slow_link(
      cluster, ws.size(), 400'000, "a refresh or notice lost?", step,
      [&] { return std::all_of(ws.begin(), ws.end(), [](const Writer &t) { return t.done; }); }, [&] { return out.ok; },
      fail);
  settle(cluster);
  for (Rank n = 0; n < nodes && out.ok; ++n) {
    Waiter w;
    cluster.node(n).engine().flush_all([&w] { w.complete(0); });
    settle(cluster);
    if (!w.done()) fail("flush_all never completed on node " + std::to_string(n));
    for (int writer = 0; writer < writers && out.ok; ++writer)
      for (uint64_t i = 0; i <= kWordsPerWriter && out.ok; ++i) {
        const uint64_t word = i < kWordsPerWriter ? data_word(writer, i) : flag_word(writer);
        uint64_t v = 0;
        while (!sim_load(cluster.node(n), word, w, &v)) settle(cluster);
        if (v != rounds)
          fail("after flush_all node " + std::to_string(n) + " reads " + std::to_string(v) + " at word " +
               std::to_string(word) + " of writer " + std::to_string(writer) + ", its last is " +
               std::to_string(rounds));
      }
  }
  for (Rank n = 0; n < nodes; ++n) out.stats.combine(cluster.node(n).stats());
  return out;
}

TEST(SimFlush, SeveralThreadsPerNodeOverManySeeds) {
  const SeedRange range = sim_seeds(600);
  for (const char *protocol : {"hlrc", "regc", "regc-page"})
    for (FlushMode mode : {FlushMode::Observer, FlushMode::Basic}) {
      Stats total;
      for (uint64_t seed = range.first; seed < range.first + range.count; ++seed) {
        Outcome r = run_threads(seed, protocol, mode);
        if (!r.ok) {
          ADD_FAILURE() << r.failure << " (replay: AGORA_SIM_SEED=" << seed << ")";
          return;
        }
        total.combine(r.stats);
      }
      if (mode == FlushMode::Observer && !sim_seed_replay()) {
        // The case the fix is for happened: a flush waited for a refresh
        // another thread of its node had asked for.
        EXPECT_GT(total.flush_refresh_waits, 0u) << protocol;
        EXPECT_GT(total.flush_case3_skips, 0u) << protocol;
      }
    }
}

int caught_with_threads(const std::string &protocol, FlushMode mode, ThreadsMutation mutation) {
  const SeedRange range = sim_mutation_seeds(600);
  int caught = 0;
  for (uint64_t seed = range.first; seed < range.first + range.count; ++seed)
    if (!run_threads(seed, protocol, mode, mutation).ok) ++caught;
  return caught;
}

TEST(SimFlush, CheckerCatchesFlushThatSkipsAPendingRefresh) {
  for (const char *protocol : {"hlrc", "regc"}) {
    int caught = caught_with_threads(protocol, FlushMode::Observer, ThreadsMutation::SkipPendingRefresh);
    std::printf("flush skipping another thread's pending refresh (%s): caught on %d seeds\n", protocol, caught);
    EXPECT_GT(caught, 0) << protocol;
  }
}

TEST(SimFlush, CheckerCatchesFlushThatTrustsAnOutstandingFetch) {
  int caught = 0;
  for (const char *protocol : {"hlrc", "regc", "regc-page"})
    for (FlushMode mode : {FlushMode::Observer, FlushMode::Basic})
      caught += caught_with_threads(protocol, mode, ThreadsMutation::TrustOutstandingFetch);
  std::printf("flush trusting another thread's outstanding fetch: caught on %d seeds\n", caught);
  EXPECT_GT(caught, 0);
}

}  // namespace
