// The atomic service (sync/atomic_service.h) in the simulator, on every
// protocol: parties on random nodes perform random atomic operations
// (fetch_add, fetch_sub, fetch_xor, exchange, compare_exchange, load,
// store) on a few shared words, each as the runtime performs it: the
// word's address-named lock (AtomicService::key_of), a read of the word,
// AtomicService::decide, the write it asks for, the release.
//
// The shadow is the sequential model the operations must be linearizable
// to: one value per word, updated at each write. Checked: the read inside
// the lock returns the word's latest write (the lock made it current), the
// results decide gives (old value, new value, exchanged or not, the value
// found) are the sequential model's, nobody wrote the word between an
// operation's read and its write, and the lock is never held twice.
// Mutation: the operation without its lock (an RMW of ordinary accesses,
// as inline atomics were under hlrc and regc): must be caught.
#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <map>
#include <sstream>

#include "sim/sim_access.h"
#include "sim/sim_scheduler.h"
#include "sim/sim_seeds.h"
#include "sync/atomic_service.h"

using namespace agora;
using namespace agora::simtest;

namespace {

struct Op {
  AtomicOp op;
  uint64_t word;
  uint64_t operand, expected;
};

struct Party {
  Rank node = 0;
  std::vector<Op> ops;
  size_t next = 0;
  int state = 0;
  bool waiting = false;
  Waiter w;
  uint64_t current = 0;     // as read under the lock
  uint64_t written_at = 0;  // the shadow's write count when it was read
  bool done = false;
};

struct Result {
  bool ok = true;
  std::string failure;
  uint64_t exchanges = 0;
};

Result run_atomics(uint64_t seed, const std::string &protocol, bool without_lock) {
  SimOptions o;
  o.protocol = protocol;
  o.seed = seed;
  o.nodes = 2 + (int)(seed % 3);  // 2..4 nodes
  o.pages = 2 + (seed / 3) % 3;   // 2..4 tiny pages
  o.page_size = 32;
  SimCluster cluster(o);
  auto &rng = cluster.rng();
  const uint64_t words = o.pages * o.page_size / 8;
  const int nwords = 1 + (int)(rng() % 3);
  std::vector<uint64_t> atomic_words;
  for (int i = 0; i < nwords; ++i) atomic_words.push_back(rng() % words);
  const int nparties = 2 + (int)(rng() % 4);
  std::deque<Party> parties;  // deque: Waiters must not move
  for (int i = 0; i < nparties; ++i) {
    Party &p = parties.emplace_back();
    p.node = (Rank)(rng() % o.nodes);
    int n = 3 + (int)(rng() % 6);
    for (int k = 0; k < n; ++k) {
      static const AtomicOp kinds[] = {AtomicOp::Add,
                                       AtomicOp::Add,
                                       AtomicOp::Sub,
                                       AtomicOp::Xor,
                                       AtomicOp::Exchange,
                                       AtomicOp::CompareExchange,
                                       AtomicOp::CompareExchange,
                                       AtomicOp::Load,
                                       AtomicOp::Store};
      Op op{kinds[rng() % (sizeof kinds / sizeof kinds[0])], atomic_words[rng() % atomic_words.size()], 1 + rng() % 7,
            rng() % 4};
      p.ops.push_back(op);
    }
  }
  std::vector<uint64_t> shadow(words, 0), writes(words, 0);
  std::map<uint64_t, int> holder;
  uint64_t steps = 0;
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
    const Op &op = p.ops[p.next];
    const uint64_t key = AtomicService::key_of(op.word * 8);
    switch (p.state) {
      case 0:  // the word's lock
        if (without_lock) {
          p.state = 2;
          return true;
        }
        p.w.reset();
        p.waiting = true;
        node.locks().acquire(key, i, &p.w);
        p.state = 1;
        return true;
      case 1:
        if (holder.count(key)) fail("lock granted while party " + std::to_string(holder[key]) + " holds it");
        holder[key] = (int)i;
        p.state = 2;
        return true;
      case 2:  // read
        if (!sim_load(node, op.word, p.w, &p.current)) return p.waiting = true, result.ok;
        if (p.current != shadow[op.word])
          fail("party " + std::to_string(i) + " read word " + std::to_string(op.word) + " as " +
               std::to_string(p.current) + " under its lock; the latest write is " + std::to_string(shadow[op.word]));
        p.written_at = writes[op.word];
        p.state = 3;
        return true;
      case 3: {  // decide, and check against the sequential model
        AtomicCall c;
        c.address = op.word * 8;
        c.size = 8;
        c.op = op.op;
        c.operand = &op.operand;
        uint64_t expected = op.expected, old = ~0ull, updated = ~0ull, next = 0;
        c.expected = &expected;
        c.old = &old;
        c.updated = &updated;
        bool exchanged = false;
        bool writes_word = AtomicService::decide(c, &p.current, &next, &exchanged);
        const uint64_t before = p.current;
        uint64_t want_next = before;
        switch (op.op) {
          case AtomicOp::Add:
            want_next = before + op.operand;
            break;
          case AtomicOp::Sub:
            want_next = before - op.operand;
            break;
          case AtomicOp::Xor:
            want_next = before ^ op.operand;
            break;
          case AtomicOp::Exchange:
          case AtomicOp::Store:
            want_next = op.operand;
            break;
          case AtomicOp::CompareExchange:
            want_next = before == op.expected ? op.operand : before;
            break;
          default:
            break;
        }
        if (writes_word && next != want_next)
          fail("decide computed " + std::to_string(next) + ", the model " + std::to_string(want_next));
        if (!writes_word && want_next != before) fail("decide skipped a write the model makes");
        if (op.op != AtomicOp::Store && op.op != AtomicOp::CompareExchange && old != before)
          fail("the old value returned is not the value read");
        if (op.op == AtomicOp::CompareExchange) {
          if (exchanged != (before == op.expected)) fail("compare_exchange decided wrongly");
          if (!exchanged && expected != before) fail("a failed compare_exchange did not return the value found");
          result.exchanges += exchanged;
        }
        p.current = next;
        p.state = writes_word ? 4 : 5;
        return true;
      }
      case 4:  // write
        if (writes[op.word] != p.written_at)
          fail("party " + std::to_string(i) + "'s read-modify-write of word " + std::to_string(op.word) +
               " overlapped another write (a lost update)");
        if (!sim_store(node, op.word, p.current, p.w)) return p.waiting = true, result.ok;
        shadow[op.word] = p.current;
        writes[op.word]++;
        p.state = 5;
        return true;
      case 5:  // release
        if (!without_lock) {
          holder.erase(key);
          if (node.locks().release(key, i) != 0) fail("the word's lock release was refused");
        }
        p.state = 0;
        if (++p.next == p.ops.size()) p.done = true;
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
  return result;
}

void run_seeds(const std::string &protocol) {
  const SeedRange range = sim_seeds(2000);
  uint64_t exchanges = 0;
  for (uint64_t seed = range.first; seed < range.end(); ++seed) {
    Result r = run_atomics(seed, protocol, false);
    ASSERT_TRUE(r.ok) << r.failure << "\nreplay: AGORA_SIM_SEED=" << seed
                      << " ./sim_tests --gtest_filter='SimAtomics.*'";
    exchanges += r.exchanges;
  }
  if (range.count > 100) {
    EXPECT_GT(exchanges, range.count / 4);  // compare_exchange really succeeded
  }
}

// The mutation: operations without the word's lock. Under every protocol
// some seeds must catch it (a stale read, or a lost update).
void run_mutation(const std::string &protocol) {
  const SeedRange range = sim_mutation_seeds(400);
  uint64_t caught = 0;
  std::string first;
  for (uint64_t seed = range.first; seed < range.end(); ++seed) {
    Result r = run_atomics(seed, protocol, true);
    caught += !r.ok;
    if (!r.ok && first.empty()) first = r.failure;
  }
  std::printf("without the lock (%s): caught in %llu of %llu seeds; first: %s\n", protocol.c_str(),
              (unsigned long long)caught, (unsigned long long)range.count, first.c_str());
  if (!sim_seed_replay()) {
    EXPECT_GT(caught, range.count / 10) << "caught in " << caught << " of " << range.count << " seeds";
  }
}

}  // namespace

TEST(SimAtomics, LinearizableUnderSc) { run_seeds("sc"); }
TEST(SimAtomics, LinearizableUnderHlrc) { run_seeds("hlrc"); }
TEST(SimAtomics, LinearizableUnderRegc) { run_seeds("regc"); }
TEST(SimAtomics, LinearizableUnderRegcPage) { run_seeds("regc-page"); }
TEST(SimAtomics, MutationWithoutLockCaughtUnderSc) { run_mutation("sc"); }
TEST(SimAtomics, MutationWithoutLockCaughtUnderHlrc) { run_mutation("hlrc"); }
TEST(SimAtomics, MutationWithoutLockCaughtUnderRegc) { run_mutation("regc"); }
