#include "sim/sim_program.h"

#include "sim/sim_scheduler.h"

#include <cstring>
#include <deque>
#include <sstream>

namespace agora::simtest {

namespace {

struct Thread {
  Rank node = 0;
  int index = 0;
  std::vector<Op> ops;
  size_t pc = 0;
  uint64_t reg = 0;
  bool blocked = false;
  Waiter waiter;
  BarrierVisit barrier;
  bool issued = false;                  // the current thread barrier / semaphore op was started
  uint64_t thread_barriers_passed = 0;  // = the round of the next thread barrier
};

// Which phases end with a thread barrier, and the word naming it (drawn only
// when the shape asks for thread barriers, so older shapes keep their programs).
struct PhaseEnds {
  std::vector<bool> thread_barrier;
  uint64_t barrier_word = 0;
  int threads = 0;
  Op end_of(int phase) const {
    if (phase < (int)thread_barrier.size() && thread_barrier[phase])
      return {OpKind::ThreadBarrier, barrier_word, (uint64_t)threads};
    return {OpKind::Barrier};
  }
};

PhaseEnds choose_phase_ends(std::mt19937_64 &rng, const ProgramShape &s, uint64_t words, int threads) {
  PhaseEnds e;
  e.threads = threads;
  if (s.thread_barrier_fraction <= 0) return e;
  std::uniform_real_distribution<double> u(0, 1);
  e.barrier_word = rng() % words;
  for (int ph = 0; ph < s.phases; ++ph) e.thread_barrier.push_back(u(rng) < s.thread_barrier_fraction);
  return e;
}

// A sweep (ProgramShape::sweep_fraction): word `offset` of each page from
// a random one on, reads or writes, up to the counters.
void add_sweep(std::mt19937_64 &rng, const ProgramShape &s, uint64_t counter_base, uint64_t words_per_page,
               uint64_t &next_value, std::vector<Op> &ops) {
  std::uniform_real_distribution<double> u(0, 1);
  const uint64_t pages = (counter_base + words_per_page - 1) / words_per_page;
  const uint64_t first = rng() % pages, length = 2 + rng() % pages, offset = rng() % words_per_page;
  const bool write = u(rng) < s.write_fraction;
  for (uint64_t p = first; p < first + length && p < pages; ++p) {
    const uint64_t w = p * words_per_page + offset;
    if (w >= counter_base) break;
    if (write)
      ops.push_back({OpKind::Write, w, ++next_value});
    else
      ops.push_back({OpKind::Read, w});
  }
}

std::vector<Op> generate(std::mt19937_64 &rng, const ProgramShape &s, uint64_t counter_base, uint64_t words_per_page,
                         uint64_t &next_value, const PhaseEnds &ends) {
  std::vector<Op> ops;
  std::uniform_real_distribution<double> u(0, 1);
  for (int ph = 0; ph < s.phases; ++ph) {
    for (int i = 0; i < s.ops_per_phase; ++i) {
      if (s.sweep_fraction > 0 && u(rng) < s.sweep_fraction) {
        add_sweep(rng, s, counter_base, words_per_page, next_value, ops);
        continue;
      }
      if (s.locks > 0 && u(rng) < s.lock_fraction) {
        uint64_t l = rng() % s.locks;
        ops.push_back({OpKind::Lock, l});
        ops.push_back({OpKind::ReadToRegister, counter_base + l});
        ops.push_back({OpKind::WriteRegisterPlusOne, counter_base + l});
        ops.push_back({OpKind::Unlock, l});
        continue;
      }
      uint64_t w = rng() % counter_base;  // counters are only touched under their lock
      if (u(rng) < s.write_fraction)
        ops.push_back({OpKind::Write, w, ++next_value});
      else
        ops.push_back({OpKind::Read, w});
    }
    ops.push_back(ends.end_of(ph));
  }
  return ops;
}

// Data-race-free programs (ProgramShape::data_race_free). Word w is guarded
// by lock (w / 4) % locks when w % 4 == 3; the first guarded word of each
// lock is its counter. Other words get, per phase, an owner thread or none
// (read-only).
bool guarded(uint64_t w) { return w % 4 == 3; }
uint64_t guard_of(uint64_t w, int locks) { return (w / 4) % (uint64_t)locks; }

// A semaphore hand-off of one phase: `words` (owned by the producer until
// its post) pass to the consumer (owner from its satisfied wait on).
struct Handoff {
  int producer, consumer;
  uint64_t semaphore;  // index, unique in the program
  std::vector<uint64_t> words;
};

std::vector<Handoff> choose_handoffs(std::mt19937_64 &rng, const ProgramShape &s, int phase, int threads,
                                     std::vector<std::vector<uint64_t>> &owned) {
  std::vector<Handoff> out;
  if (s.handoffs_per_phase <= 0 || threads < 2) return out;
  std::vector<bool> producing(threads, false);
  for (int k = 0; k < s.handoffs_per_phase; ++k) {
    int p = (int)(rng() % threads);
    int c = (p + 1 + (int)(rng() % (threads - 1))) % threads;
    if (producing[p] || owned[p].empty()) continue;  // one hand-off per producer and phase
    producing[p] = true;
    Handoff h{p, c, (uint64_t)phase * threads + p, {}};
    for (int n = 1 + (int)(rng() % 3); n > 0 && !owned[p].empty(); --n) {
      size_t i = rng() % owned[p].size();
      h.words.push_back(owned[p][i]);
      owned[p].erase(owned[p].begin() + i);
    }
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<std::vector<Op>> generate_race_free(std::mt19937_64 &rng, const ProgramShape &s, uint64_t words,
                                                int threads, std::vector<uint64_t> *counters) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<uint64_t>> guarded_by(s.locks);
  for (uint64_t w = 0; w < words; ++w)
    if (guarded(w)) guarded_by[guard_of(w, s.locks)].push_back(w);
  counters->clear();
  for (auto &g : guarded_by) counters->push_back(g.at(0));
  PhaseEnds ends = choose_phase_ends(rng, s, words, threads);
  std::vector<std::vector<Op>> ops(threads);
  uint64_t next_value = 0;
  for (int ph = 0; ph < s.phases; ++ph) {
    std::vector<std::vector<uint64_t>> owned(threads);
    std::vector<uint64_t> shared_ro;
    for (uint64_t w = 0; w < words; ++w) {
      if (guarded(w)) continue;
      if (u(rng) < 0.4)
        shared_ro.push_back(w);
      else
        owned[rng() % threads].push_back(w);
    }
    // owned[t] is what t may touch all phase long; handed words only before
    // the post (producer) or after the wait (consumer).
    std::vector<std::vector<uint64_t>> before = owned;
    std::vector<Handoff> handoffs = choose_handoffs(rng, s, ph, threads, owned);
    std::vector<std::vector<uint64_t>> after = owned;
    for (const Handoff &h : handoffs) after[h.consumer].insert(after[h.consumer].end(), h.words.begin(), h.words.end());
    for (int t = 0; t < threads; ++t) {
      auto &out = ops[t];
      auto plain_ops = [&](int count, const std::vector<uint64_t> &mine_words) {
        for (int i = 0; i < count; ++i) {
          if (u(rng) < s.lock_fraction) {
            uint64_t l = rng() % s.locks;
            const auto &g = guarded_by[l];
            out.push_back({OpKind::Lock, l});
            out.push_back({OpKind::ReadToRegister, g[0]});
            out.push_back({OpKind::WriteRegisterPlusOne, g[0]});
            for (int k = (int)(rng() % 4); k > 0; --k) {
              uint64_t w = g[rng() % g.size()];
              if (w == g[0] || u(rng) < 0.5)
                out.push_back({OpKind::Read, w});
              else
                out.push_back({OpKind::Write, w, ++next_value});
            }
            out.push_back({OpKind::Unlock, l});
            continue;
          }
          bool mine = !mine_words.empty() && (shared_ro.empty() || u(rng) < 0.6);
          if (mine) {
            uint64_t w = mine_words[rng() % mine_words.size()];
            if (u(rng) < s.write_fraction)
              out.push_back({OpKind::Write, w, ++next_value});
            else
              out.push_back({OpKind::Read, w});
          } else if (!shared_ro.empty()) {
            out.push_back({OpKind::Read, shared_ro[rng() % shared_ro.size()]});
          }
        }
      };
      if (handoffs.empty()) {
        plain_ops(s.ops_per_phase, owned[t]);
      } else {
        // Posts before waits in every thread: a post never waits for another
        // thread, so the hand-offs cannot deadlock.
        plain_ops(s.ops_per_phase / 2, before[t]);
        for (const Handoff &h : handoffs) {
          if (h.producer != t) continue;
          for (uint64_t w : h.words) out.push_back({OpKind::Write, w, ++next_value});
          out.push_back({OpKind::SemPost, h.semaphore});
        }
        for (const Handoff &h : handoffs) {
          if (h.consumer != t) continue;
          out.push_back({OpKind::SemWait, h.semaphore});
          for (uint64_t w : h.words) out.push_back({OpKind::Read, w});
        }
        plain_ops(s.ops_per_phase - s.ops_per_phase / 2, after[t]);
      }
      out.push_back(ends.end_of(ph));
    }
  }
  return ops;
}

}  // namespace

RunResult run_random_program(SimCluster &cluster, const ProgramShape &shape, const ReadOracle &check_read,
                             const WriteObserver &on_write) {
  const SimOptions &o = cluster.options();
  const uint64_t words_per_page = o.page_size / 8;
  const uint64_t words = o.pages * words_per_page;
  const uint64_t counter_base = words - (uint64_t)shape.locks;
  auto &rng = cluster.rng();
  RunResult result;

  std::deque<Thread> threads;  // deque: Waiters must not move
  uint64_t next_value = 0;
  // counters[l]: the word lock l's increments go to.
  std::vector<uint64_t> counters;
  std::vector<std::vector<Op>> race_free;
  if (!shape.given.empty())
    race_free = shape.given;
  else if (shape.data_race_free)
    race_free = generate_race_free(rng, shape, words, o.nodes * shape.threads_per_node, &counters);
  else
    for (int l = 0; l < shape.locks; ++l) counters.push_back(counter_base + l);
  PhaseEnds ends;
  if (!shape.data_race_free) ends = choose_phase_ends(rng, shape, words, o.nodes * shape.threads_per_node);
  for (Rank n = 0; n < o.nodes; ++n)
    for (int t = 0; t < shape.threads_per_node; ++t) {
      Thread &th = threads.emplace_back();
      th.node = n;
      th.index = t;
      th.ops = shape.data_race_free || !shape.given.empty()
                   ? std::move(race_free.at(threads.size() - 1))
                   : generate(rng, shape, counter_base, words_per_page, next_value, ends);
    }
  // Memory servers (SimOptions::server_nodes) compute nothing: their
  // threads keep only the barriers every thread must pass.
  for (Thread &th : threads)
    if (th.node >= o.nodes - o.server_nodes) {
      std::vector<Op> kept;
      for (const Op &op : th.ops)
        if (op.kind == OpKind::Barrier || op.kind == OpKind::ThreadBarrier) kept.push_back(op);
      th.ops = std::move(kept);
    }
  std::deque<NodeBarrier> barriers(o.nodes);
  std::vector<int> lock_holder(shape.locks, -1);  // thread index, for mutual exclusion
  std::vector<uint64_t> increments(shape.locks, 0);
  // Thread barrier rounds (all threads pass the same ones in order): who
  // arrived, and how many left as the serial thread (exactly one must).
  std::vector<uint64_t> round_arrived, round_serial;
  std::vector<bool> posted;  // by semaphore index: its post has been called
  auto semaphore_address = [&](uint64_t index) { return (o.pages + index) * o.page_size; };

  auto fail = [&](const std::string &what) {
    std::ostringstream s;
    s << "seed " << o.seed << " (nodes " << o.nodes << ", pages " << o.pages << ", protocol " << o.protocol
      << "), step " << result.steps << ": " << what;
    result.ok = false;
    result.failure = s.str();
  };
  auto word_ptr = [&](Rank n, uint64_t w) {
    return (uint64_t *)(cluster.node(n).frame(w / words_per_page) + (w % words_per_page) * 8);
  };

  // Returns false if the thread could not make progress (blocked or done).
  auto step = [&](size_t ti) -> bool {
    Thread &t = threads[ti];
    if (t.pc >= t.ops.size()) return false;
    if (t.blocked) {
      if (!t.waiter.done()) return false;
      t.blocked = false;
      bool serial_allowed = t.ops[t.pc].kind == OpKind::ThreadBarrier && t.waiter.status == 1;
      if (t.waiter.status != 0 && !serial_allowed) {
        fail("a waiter completed with status " + std::to_string(t.waiter.status));
        return false;
      }
    }
    SimNode &node = cluster.node(t.node);
    Op &op = t.ops[t.pc];
    auto fault = [&](uint64_t w, Access need) {
      t.waiter.reset();
      t.waiter.status = 0;
      t.blocked = true;
      (need == Access::Write ? result.totals.write_faults : result.totals.read_faults)++;
      node.engine().on_fault(w / words_per_page, need, &t.waiter);
    };
    switch (op.kind) {
      case OpKind::Read:
      case OpKind::ReadToRegister: {
        if (node.access(op.word / words_per_page) < Access::Read) {
          fault(op.word, Access::Read);
          return true;
        }
        uint64_t v = *word_ptr(t.node, op.word);
        std::string bad = check_read(t.node, op.word, v);
        if (!bad.empty()) {
          fail("node " + std::to_string(t.node) + " thread " + std::to_string(t.index) + " read word " +
               std::to_string(op.word) + ": " + bad);
          return false;
        }
        if (op.kind == OpKind::ReadToRegister) t.reg = v;
        break;
      }
      case OpKind::Write:
      case OpKind::WriteRegisterPlusOne: {
        if (node.access(op.word / words_per_page) < Access::Write) {
          fault(op.word, Access::Write);
          return true;
        }
        uint64_t v = op.kind == OpKind::Write ? op.value : t.reg + 1;
        *word_ptr(t.node, op.word) = v;
        node.stored(op.word / words_per_page);
        on_write(t.node, op.word, v);
        if (op.kind == OpKind::WriteRegisterPlusOne)
          for (int l = 0; l < shape.locks; ++l)
            if (counters[l] == op.word) increments[l]++;
        break;
      }
      case OpKind::Lock:
        // First visit requests the lock; the visit after the wake-up holds it.
        if (op.value == 0) {
          op.value = 1;  // requested
          t.waiter.reset();
          t.blocked = true;
          node.locks().acquire(op.word, ti, &t.waiter);
          return true;
        }
        if (lock_holder[op.word] != -1) {
          fail("lock " + std::to_string(op.word) + " granted to thread " + std::to_string(ti) + " while thread " +
               std::to_string(lock_holder[op.word]) + " holds it");
          return false;
        }
        lock_holder[op.word] = (int)ti;
        break;
      case OpKind::Unlock:
        lock_holder[op.word] = -1;
        if (node.locks().release(op.word, ti) != 0) {
          fail("release of lock " + std::to_string(op.word) + " refused");
          return false;
        }
        break;
      case OpKind::Barrier:
        switch (node_barrier_step(node, barriers[t.node], t.barrier, shape.threads_per_node)) {
          case BarrierStep::Passed:
            break;
          case BarrierStep::Progressed:
            return true;
          case BarrierStep::Blocked:
            return false;
        }
        break;
      case OpKind::ThreadBarrier: {
        uint64_t round = t.thread_barriers_passed;
        if (!t.issued) {
          t.issued = true;
          if (round_arrived.size() <= round) round_arrived.resize(round + 1), round_serial.resize(round + 1);
          round_arrived[round]++;
          t.waiter.reset();
          t.blocked = true;
          node.thread_barriers().wait(op.word * 8, (uint32_t)op.value, &t.waiter);
          return true;
        }
        t.issued = false;
        if (round_arrived[round] != op.value) {
          fail("node " + std::to_string(t.node) + " thread " + std::to_string(t.index) + " left thread barrier round " +
               std::to_string(round) + " when " + std::to_string(round_arrived[round]) + " of " +
               std::to_string(op.value) + " threads had arrived");
          return false;
        }
        if (t.waiter.status == 1) round_serial[round]++;
        t.thread_barriers_passed++;
        break;
      }
      case OpKind::SemPost:
      case OpKind::SemWait:
        if (!t.issued) {
          t.issued = true;
          t.waiter.reset();
          t.blocked = true;
          if (op.kind == OpKind::SemPost) {
            if (posted.size() <= op.word) posted.resize(op.word + 1);
            posted[op.word] = true;
            node.semaphores().post(semaphore_address(op.word), &t.waiter);
          } else {
            node.semaphores().wait(semaphore_address(op.word), false, &t.waiter);
          }
          return true;
        }
        t.issued = false;
        if (op.kind == OpKind::SemWait && (posted.size() <= op.word || !posted[op.word])) {
          fail("node " + std::to_string(t.node) + " thread " + std::to_string(t.index) + ": wait on semaphore " +
               std::to_string(op.word) + " returned before its post");
          return false;
        }
        break;
    }
    t.pc++;
    return true;
  };

  Schedule schedule;
  schedule.threads = threads.size();
  schedule.step = step;
  schedule.finished = [&](size_t i) { return threads[i].pc >= threads[i].ops.size(); };
  schedule.ok = [&] { return result.ok; };
  schedule.fail = fail;
  run_schedule(cluster, schedule, &result.steps);
  if (result.ok)
    for (size_t r = 0; r < round_serial.size() && result.ok; ++r)
      if (round_serial[r] != 1)
        fail("thread barrier round " + std::to_string(r) + " had " + std::to_string(round_serial[r]) +
             " serial threads (AGORA_BARRIER_SERIAL), not exactly one");
  if (result.ok) {
    for (int l = 0; l < shape.locks; ++l) {
      // The counter's final value, read through the oracle's view of memory.
      std::string bad = check_read(-1, counters[l], increments[l]);
      if (!bad.empty()) fail("lock counter " + std::to_string(l) + ": " + bad);
    }
  }
  result.messages = cluster.delivered();
  for (Rank n = 0; n < o.nodes; ++n) result.totals.combine(cluster.node(n).stats());
  return result;
}

}  // namespace agora::simtest

namespace agora::simtest {

RunResult run_against_latest_write(const SimOptions &options, const ProgramShape &shape) {
  SimCluster cluster(options);
  std::vector<uint64_t> shadow(options.pages * options.page_size / 8, 0);
  auto oracle = [&](Rank, uint64_t word, uint64_t seen) -> std::string {
    if (seen == shadow[word]) return "";
    return "saw " + std::to_string(seen) + ", latest write is " + std::to_string(shadow[word]);
  };
  auto observe = [&](Rank, uint64_t word, uint64_t value) { shadow[word] = value; };
  return run_random_program(cluster, shape, oracle, observe);
}

}  // namespace agora::simtest
