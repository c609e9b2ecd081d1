#include "sim/sim_regc_program.h"

#include "agora/agora.h"

#include <deque>
#include <random>
#include <set>
#include <sstream>

#include "sim/sim_regc_oracle.h"
#include "sim/sim_scheduler.h"

namespace agora::simtest {

uint64_t regc_value(uint64_t word, uint64_t k) {
  // Byte i is k shifted by an offset that depends on the word and on i
  // (mod 255, never 0): any two values of one word differ in every byte.
  uint64_t v = 0;
  for (uint64_t i = 0; i < 8; ++i) v |= (((k - 1 + word * (2 * i + 1) * 7) % 255) + 1) << (8 * i);
  return v;
}

RegcProgram generate_regc_program(uint64_t seed, const RegcShape &s, int nodes, uint64_t words) {
  // Its own generator, so that a program does not depend on how the run
  // that executes it uses the cluster's.
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 0x5ec);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<uint64_t> writes_of(words, 0);
  // Which phases end with a thread barrier: from a generator of their own,
  // so that the ops of every other seed's program stay as they were.
  std::mt19937_64 kinds(seed * 0x2545f4914f6cdd1dull + 0xba7);
  std::vector<bool> thread_barrier_ends(s.phases);
  for (int ph = 0; ph < s.phases; ++ph) thread_barrier_ends[ph] = u(kinds) < s.thread_barrier_fraction;
  RegcProgram program(nodes * s.threads_per_node);
  for (auto &ops : program) {
    auto memory_ops = [&](int count) {
      for (int k = 0; k < count; ++k) {
        uint64_t w = rng() % words;
        if (u(rng) < s.write_fraction && writes_of[w] < kMaxWritesPerWord)
          ops.push_back({RegcOpKind::Write, w, regc_value(w, ++writes_of[w])});
        else
          ops.push_back({RegcOpKind::Read, w});
      }
    };
    for (int ph = 0; ph < s.phases; ++ph) {
      for (int i = 0; i < s.ops_per_phase; ++i) {
        if (s.locks == 0 || u(rng) >= s.span_fraction) {
          memory_ops(1);
          continue;
        }
        // Nested locks are taken in increasing order, so spans cannot deadlock.
        uint64_t outer = rng() % s.locks;
        bool nested = outer + 1 < (uint64_t)s.locks && u(rng) < s.nest_fraction;
        ops.push_back({RegcOpKind::Lock, outer});
        memory_ops(1 + (int)(rng() % s.max_span_ops));
        if (nested) {
          uint64_t inner = outer + 1 + rng() % (s.locks - outer - 1);
          ops.push_back({RegcOpKind::Lock, inner});
          memory_ops(1 + (int)(rng() % s.max_span_ops));
          ops.push_back({RegcOpKind::Unlock, inner});
          memory_ops((int)(rng() % (s.max_span_ops + 1)));
        }
        ops.push_back({RegcOpKind::Unlock, outer});
      }
      ops.push_back({thread_barrier_ends[ph] ? RegcOpKind::ThreadBarrier : RegcOpKind::Barrier});
    }
    for (int k = 0; k < s.final_reads; ++k) ops.push_back({RegcOpKind::Read, rng() % words});
  }
  return program;
}

namespace {

// The thread barrier's object (an address: the service's manager is its
// page's home; nothing is stored there).
constexpr uint64_t kThreadBarrierObject = 8;

struct Thread {
  Rank node = 0;
  std::vector<RegcOp> ops;
  size_t pc = 0;
  bool blocked = false;
  Waiter waiter;
  bool lock_requested = false;  // the current Lock op's request has been made
  bool awaiting_grant = false;  // ... and its grant has not been seen yet
  BarrierVisit barrier;
  bool thread_barrier_arrived = false;  // the current ThreadBarrier op's wait has been made
};

const char *mutation_name(EngineOptions::Mutation m) {
  switch (m) {
    case EngineOptions::Mutation::None:
      return "none";
    case EngineOptions::Mutation::RegcSkipRule1:
      return "RegcSkipRule1";
    case EngineOptions::Mutation::RegcSkipSpanLog:
      return "RegcSkipSpanLog";
    case EngineOptions::Mutation::ScPrefetchIgnoresState:
      return "ScPrefetchIgnoresState";
    case EngineOptions::Mutation::ScBatchSkipsReader:
      return "ScBatchSkipsReader";
    case EngineOptions::Mutation::RegcHomeWriteNoNotice:
      return "RegcHomeWriteNoNotice";
    case EngineOptions::Mutation::RegcStandingTwinRebased:
      return "RegcStandingTwinRebased";
    case EngineOptions::Mutation::RegcReleaseSkipsSpans:
      return "RegcReleaseSkipsSpans";
    case EngineOptions::Mutation::RegcSpanStartsAtGrant:
      return "RegcSpanStartsAtGrant";
    case EngineOptions::Mutation::RegcBroadcastOwnHomesOnly:
      return "RegcBroadcastOwnHomesOnly";
  }
  return "?";
}

}  // namespace

RegcRunResult run_regc_program(const SimOptions &options, int threads_per_node, int locks, RegcProgram program) {
  SimOptions o = options;
  o.application_threads = threads_per_node;
  SimCluster cluster(o);
  const uint64_t words_per_page = o.page_size / 8;
  const uint64_t words = o.pages * words_per_page;
  RegcRunResult result;

  std::deque<Thread> threads;  // deque: Waiters must not move
  std::vector<Rank> node_of;
  for (size_t i = 0; i < program.size(); ++i) {
    Thread &t = threads.emplace_back();
    t.node = (Rank)(i / threads_per_node);
    t.ops = std::move(program[i]);
    node_of.push_back(t.node);
  }
  RegcOracle oracle((int)threads.size(), node_of, locks, words);
  std::deque<NodeBarrier> barriers(o.nodes);
  std::vector<int> lock_holder(locks, -1);
  std::set<uint64_t> raised;
  uint64_t action = 0;

  auto fail = [&](const std::string &what) {
    std::ostringstream s;
    s << "seed " << o.seed << " (nodes " << o.nodes << ", pages " << o.pages << " of " << o.page_size << " bytes, "
      << threads_per_node << " threads per node, protocol " << o.protocol << ", mutation "
      << mutation_name(o.engine.mutation) << (o.track_home_writes ? ", home writes tracked" : "") << "), step "
      << result.steps << ": " << what;
    result.ok = false;
    result.failure = s.str();
  };
  auto word_ptr = [&](Rank n, uint64_t w) {
    return (uint64_t *)(cluster.node(n).frame(w / words_per_page) + (w % words_per_page) * 8);
  };
  auto who = [&](size_t ti) { return "node " + std::to_string(threads[ti].node) + " thread " + std::to_string(ti); };

  auto step = [&](size_t ti) -> bool {
    Thread &t = threads[ti];
    if (t.pc >= t.ops.size()) return false;
    if (t.blocked) {
      if (!t.waiter.done()) return false;
      t.blocked = false;
      const bool serial = t.waiter.status == AGORA_BARRIER_SERIAL && t.ops[t.pc].kind == RegcOpKind::ThreadBarrier;
      if (t.waiter.status != 0 && !serial) {
        fail(who(ti) + ": a waiter completed with status " + std::to_string(t.waiter.status));
        return false;
      }
    }
    SimNode &node = cluster.node(t.node);
    const RegcOp &op = t.ops[t.pc];
    if ((op.kind == RegcOpKind::Read || op.kind == RegcOpKind::Write) && op.word >= words) {
      fail(who(ti) + ": word " + std::to_string(op.word) + " is past the " + std::to_string(words) + " words");
      return false;
    }
    auto fault = [&](Access need) {
      t.waiter.reset();
      t.waiter.status = 0;
      t.blocked = true;
      node.engine().on_fault(op.word / words_per_page, need, &t.waiter);
    };
    switch (op.kind) {
      case RegcOpKind::Read: {
        if (node.access(op.word / words_per_page) < Access::Read) {
          fault(Access::Read);
          return true;
        }
        std::string bad = oracle.read((int)ti, op.word, *word_ptr(t.node, op.word));
        if (!bad.empty()) {
          fail(who(ti) + " read word " + std::to_string(op.word) + ": " + bad);
          return false;
        }
        break;
      }
      case RegcOpKind::Write:
        if (node.access(op.word / words_per_page) < Access::Write) {
          fault(Access::Write);
          return true;
        }
        *word_ptr(t.node, op.word) = op.value;
        node.stored(op.word / words_per_page);
        oracle.write((int)ti, op.word, op.value);
        break;
      case RegcOpKind::Lock:
        if (op.word >= (uint64_t)locks) {
          fail(who(ti) + ": lock " + std::to_string(op.word) + " is past the " + std::to_string(locks) + " locks");
          return false;
        }
        // First visit requests the lock; the grant is time-stamped when it
        // happens (after_action); the visit after the wake-up holds it.
        if (!t.lock_requested) {
          t.lock_requested = t.awaiting_grant = t.blocked = true;
          t.waiter.reset();
          t.waiter.status = 0;
          if (int rc = node.locks().acquire(op.word, ti, &t.waiter); rc != 0) {
            fail(who(ti) + ": acquire of lock " + std::to_string(op.word) + " returned " + std::to_string(rc));
            return false;
          }
          return true;
        }
        t.lock_requested = false;
        if (lock_holder[op.word] != -1) {
          fail("lock " + std::to_string(op.word) + " granted to thread " + std::to_string(ti) + " while thread " +
               std::to_string(lock_holder[op.word]) + " holds it");
          return false;
        }
        lock_holder[op.word] = (int)ti;
        break;
      case RegcOpKind::Unlock:
        if (op.word >= (uint64_t)locks || lock_holder[op.word] != (int)ti) {
          fail(who(ti) + ": unlock of lock " + std::to_string(op.word) + " it does not hold");
          return false;
        }
        lock_holder[op.word] = -1;
        oracle.released((int)ti, op.word);
        if (node.locks().release(op.word, ti) != 0) {
          fail(who(ti) + ": release of lock " + std::to_string(op.word) + " refused");
          return false;
        }
        break;
      case RegcOpKind::Barrier:
        switch (node_barrier_step(node, barriers[t.node], t.barrier, threads_per_node)) {
          case BarrierStep::Passed:
            oracle.passed_barrier((int)ti);
            break;
          case BarrierStep::Progressed:
            return true;
          case BarrierStep::Blocked:
            return false;
        }
        break;
      case RegcOpKind::ThreadBarrier:
        // One object for every round (the service numbers rounds); its
        // page's home manages it.
        if (!t.thread_barrier_arrived) {
          t.thread_barrier_arrived = t.blocked = true;
          t.waiter.reset();
          t.waiter.status = 0;
          node.thread_barriers().wait(kThreadBarrierObject, (uint32_t)threads.size(), &t.waiter);
          return true;
        }
        t.thread_barrier_arrived = false;
        oracle.passed_barrier((int)ti);
        break;
      case RegcOpKind::Signal:
        raised.insert(op.word);
        break;
      case RegcOpKind::Await:
        if (!raised.count(op.word)) return false;
        break;
    }
    t.pc++;
    return true;
  };

  // A span starts when its lock is granted: the waiter completes inside a
  // delivery (or inside the acquire, for a free local lock), so look after
  // every action; grants seen after the same action share its stamp.
  auto stamp_grants = [&] {
    ++action;
    for (size_t ti = 0; ti < threads.size(); ++ti) {
      Thread &t = threads[ti];
      if (!t.awaiting_grant || !t.waiter.done()) continue;
      t.awaiting_grant = false;
      if (t.waiter.status == 0) oracle.granted((int)ti, t.ops[t.pc].word, action);
    }
  };

  Schedule schedule;
  schedule.threads = threads.size();
  schedule.step = step;
  schedule.finished = [&](size_t i) { return threads[i].pc >= threads[i].ops.size(); };
  schedule.ok = [&] { return result.ok; };
  schedule.fail = fail;
  schedule.after_action = stamp_grants;
  run_schedule(cluster, schedule, &result.steps);

  result.messages = cluster.delivered();
  for (Rank n = 0; n < o.nodes; ++n) result.totals.combine(cluster.node(n).stats());
  result.reads = oracle.reads();
  for (int k = 1; k <= 3; ++k) result.constrained[k] = oracle.reads_constrained_by(k);
  return result;
}

RegcRunResult run_random_regc_program(const SimOptions &options, const RegcShape &shape) {
  uint64_t words = options.pages * (options.page_size / 8);
  return run_regc_program(options, shape.threads_per_node, shape.locks,
                          generate_regc_program(options.seed, shape, options.nodes, words));
}

}  // namespace agora::simtest
