// Condition variables (ConditionService) in the simulator, on every
// protocol: producers and consumers on random nodes share a stack of items
// guarded by one lock. A producer pushes an item and signals (or
// broadcasts); a consumer waits on the condition while the stack is empty
// (queued before it releases the lock, as agora_cond_wait does), some with a
// deadline after which they withdraw. Checked: every item is consumed exactly
// once, every read returns the latest write (the lock makes the program
// data-race free), the lock is never held twice, and a waiter woken by a
// signal (status 0) was waiting when some signal was issued (no spurious
// wakeups); a withdrawn waiter ends with 0 or AGORA_TIMEDOUT (3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <sstream>

#include "sim/sim_access.h"
#include "sim/sim_scheduler.h"
#include "sim/sim_seeds.h"

using namespace agora;
using namespace agora::simtest;

namespace {

struct Party {
  Rank node = 0;
  bool producer = false;
  uint64_t value = 0;  // a producer's item
  int deadline = -1;   // a consumer's steps of waiting before it withdraws (-1: none)
  int state = 0;
  bool waiting = false;  // on w (a lock or a fault)
  Waiter w, queued, woken;
  uint64_t items = 0;  // as read under the lock
  uint64_t signals_at_enqueue = 0;
  int waited_steps = 0;
  bool cancelled = false;
  bool done = false;
};

struct Result {
  bool ok = true;
  std::string failure;
  uint64_t waits = 0, timeouts = 0;
};

Result run_condition(uint64_t seed, const std::string &protocol) {
  SimOptions o;
  o.protocol = protocol;
  o.seed = seed;
  o.nodes = 2 + (int)(seed % 3);  // 2..4 nodes
  o.pages = 2 + (seed / 3) % 3;   // 2..4 tiny pages
  o.page_size = 32;
  SimCluster cluster(o);
  auto &rng = cluster.rng();
  const int n = 2 + (int)(rng() % 4);  // producers = consumers
  const uint64_t count_word = rng() % (o.pages * o.page_size / 8 - n);
  auto slot_word = [&](uint64_t i) { return count_word + 1 + i; };
  const uint64_t lock = 0, cond = (o.pages + 3) * o.page_size;  // named past the pages
  std::vector<bool> producer(2 * n);
  for (int i = 0; i < 2 * n; ++i) producer[i] = i % 2 == 0;
  std::shuffle(producer.begin(), producer.end(), rng);
  std::deque<Party> parties;  // deque: Waiters must not move
  for (int i = 0; i < 2 * n; ++i) {
    Party &p = parties.emplace_back();
    p.node = (Rank)(rng() % o.nodes);
    p.producer = producer[i];
    p.value = 1000 + (uint64_t)i;
    if (!p.producer && rng() % 3 == 0) p.deadline = (int)(rng() % 20);
  }
  std::vector<uint64_t> shadow(o.pages * o.page_size / 8, 0), consumed;
  int holder = -1;
  uint64_t signals = 0, steps = 0;
  Result result;
  auto fail = [&](const std::string &what) {
    if (!result.ok) return;
    std::ostringstream s;
    s << "seed " << seed << " (" << protocol << ", nodes " << o.nodes << "), step " << steps << ": " << what;
    result.ok = false;
    result.failure = s.str();
  };

  auto step = [&](size_t i) -> bool {
    Party &p = parties[i];
    if (p.done) return false;
    if (p.waiting) {
      if (!p.w.done()) return false;
      p.waiting = false;
    }
    SimNode &node = cluster.node(p.node);
    auto load = [&](uint64_t word, uint64_t *v) {
      if (!sim_load(node, word, p.w, v)) return p.waiting = true, false;
      if (*v != shadow[word]) {
        fail("read of word " + std::to_string(word) + " saw " + std::to_string(*v) + ", latest write " +
             std::to_string(shadow[word]));
        return false;
      }
      return true;
    };
    auto store = [&](uint64_t word, uint64_t v) {
      if (!sim_store(node, word, v, p.w)) return p.waiting = true, false;
      shadow[word] = v;
      return true;
    };
    auto unlock = [&] {
      holder = -1;
      if (node.locks().release(lock, i) != 0) fail("the lock's release was refused");
    };
    switch (p.state) {
      case 0:  // lock
        p.w.reset();
        p.waiting = true;
        node.locks().acquire(lock, i, &p.w);
        p.state = 1;
        return true;
      case 1:  // holds it
        if (holder != -1) fail("lock granted while party " + std::to_string(holder) + " holds it");
        holder = (int)i;
        p.state = 2;
        return true;
      case 2:
        if (!load(count_word, &p.items)) return result.ok;
        if (p.producer)
          p.state = 10;
        else
          p.state = p.items == 0 ? 20 : 30;
        return true;
      case 10:  // push
        if (!store(slot_word(p.items), p.value)) return result.ok;
        p.state = 11;
        return true;
      case 11:
        if (!store(count_word, p.items + 1)) return result.ok;
        signals++;
        node.conditions().signal(cond, rng() % 2 == 0);
        unlock();
        p.done = true;
        return true;
      case 20:  // wait: queued before the lock is released
        result.waits++;
        p.queued.reset();
        p.woken.reset();
        p.cancelled = false;
        p.waited_steps = 0;
        p.signals_at_enqueue = signals;
        node.conditions().enqueue(cond, &p.woken, &p.queued);
        p.state = 21;
        return true;
      case 21:
        if (!p.queued.done()) return false;
        unlock();
        p.state = 22;
        return true;
      case 22:
        if (!p.woken.done()) {
          if (p.deadline < 0 || p.cancelled || p.waited_steps++ < p.deadline) return false;
          p.cancelled = true;  // the deadline passed: withdraw
          node.conditions().cancel(cond, &p.woken);
          return true;
        }
        if (p.woken.status == 3) {
          if (!p.cancelled) fail("a waiter that never withdrew timed out");
          result.timeouts++;
        } else if (p.woken.status != 0) {
          fail("a wait ended with status " + std::to_string(p.woken.status));
        } else if (signals == p.signals_at_enqueue) {
          fail("a waiter was woken with no signal issued since it queued (spurious wakeup)");
        }
        p.state = 0;  // take the lock again and look
        return true;
      case 30: {  // pop
        uint64_t v = 0;
        if (!load(slot_word(p.items - 1), &v)) return result.ok;
        consumed.push_back(v);
        p.state = 31;
        return true;
      }
      case 31:
        if (!store(count_word, p.items - 1)) return result.ok;
        unlock();
        p.done = true;
        return true;
    }
    return false;
  };

  Schedule schedule;
  schedule.threads = parties.size();
  schedule.step = step;
  schedule.finished = [&](size_t i) { return parties[i].done; };
  schedule.ok = [&] { return result.ok; };
  schedule.fail = fail;
  run_schedule(cluster, schedule, &steps);
  if (result.ok) {
    std::vector<uint64_t> produced;
    for (const Party &p : parties)
      if (p.producer) produced.push_back(p.value);
    std::sort(produced.begin(), produced.end());
    std::sort(consumed.begin(), consumed.end());
    if (produced != consumed) fail("the items consumed are not the items produced");
  }
  return result;
}

void run_seeds(const std::string &protocol) {
  const SeedRange range = sim_seeds(2000);
  const uint64_t seeds = range.count;
  uint64_t waits = 0, timeouts = 0;
  for (uint64_t seed = range.first; seed < range.end(); ++seed) {
    Result r = run_condition(seed, protocol);
    ASSERT_TRUE(r.ok) << r.failure << "\nreplay: AGORA_SIM_SEED=" << seed
                      << " ./sim_tests --gtest_filter='SimConditions.*'";
    waits += r.waits;
    timeouts += r.timeouts;
  }
  if (seeds > 100) {
    EXPECT_GT(waits, seeds / 2);  // consumers really waited
    EXPECT_GT(timeouts, 0u);      // and some withdrew
  }
}

}  // namespace

TEST(SimConditions, ProducersAndConsumersUnderSc) { run_seeds("sc"); }
TEST(SimConditions, ProducersAndConsumersUnderHlrc) { run_seeds("hlrc"); }
TEST(SimConditions, ProducersAndConsumersUnderRegc) { run_seeds("regc"); }
TEST(SimConditions, ProducersAndConsumersUnderRegcPage) { run_seeds("regc-page"); }
