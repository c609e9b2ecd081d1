// Programs for the Regional Consistency tester: virtual threads on every
// node issue ordinary reads and writes of words on tiny pages, spans of
// several locks (nested up to two deep) reading and writing any words, and
// barriers over all threads (node-level, or thread barriers as pthreads
// programs use); every read is checked by RegcOracle. Random
// programs come from a seed; directed ones are written by hand, ordered
// between threads by Signal/Await (test scaffolding outside the model: it
// orders execution, it makes nothing visible). Runs against any protocol.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/sim_cluster.h"

namespace agora::simtest {

enum class RegcOpKind {
  Read,     // word
  Write,    // word, value (regc_value: unique in the program, never 0)
  Lock,     // lock
  Unlock,   // lock
  Barrier,  // every thread of every node (node-level BarrierService)
  // Every thread of every node, as pthread_barrier_wait (ThreadBarrierService:
  // a release at the arrival, an acquire at the departure); rule 3 as Barrier.
  ThreadBarrier,
  Signal,  // word = signal number: marks it raised
  Await,   // word = signal number: blocks until it is raised
};
struct RegcOp {
  RegcOpKind kind;
  uint64_t word = 0;  // word index, lock id or signal number
  uint64_t value = 0;
};
// One op list per thread; thread i runs on node i / threads_per_node.
using RegcProgram = std::vector<std::vector<RegcOp>>;

struct RegcShape {
  int threads_per_node = 2;
  int phases = 4;  // ended by barriers
  // Of the phases, those ended by a thread barrier instead of the
  // node-level one (by the seed; the same phases for every thread).
  double thread_barrier_fraction = 0.5;
  int ops_per_phase = 24;
  int locks = 3;
  double span_fraction = 0.25;  // of a phase's ops that start a span
  double nest_fraction = 0.35;  // of spans that take a second (higher-numbered) lock inside
  int max_span_ops = 4;         // reads/writes in each part of a span
  double write_fraction = 0.45;
  int final_reads = 6;  // per thread, after the last barrier
};

struct RegcRunResult {
  bool ok = true;
  std::string failure;  // what went wrong, with the seed
  uint64_t steps = 0, messages = 0, reads = 0;
  uint64_t constrained[4] = {0, 0, 0, 0};  // reads constrained by rule 1..3 (RegcOracle)
  Stats totals;                            // every node's statistics combined
};

// The value of the k-th write (k = 1..kMaxWritesPerWord) of `word` in a
// program: unique in the program, never 0, and differing in every byte from
// every other value of the word. Protocols diff pages byte by byte, so two
// racing writes of one word could otherwise merge into a torn value that
// looks like neither; this way each diff carries the whole word.
constexpr uint64_t kMaxWritesPerWord = 255;
uint64_t regc_value(uint64_t word, uint64_t k);

RegcProgram generate_regc_program(uint64_t seed, const RegcShape &shape, int nodes, uint64_t words);

// Runs `program` on a cluster built from `options`; locks are 0..locks-1.
RegcRunResult run_regc_program(const SimOptions &options, int threads_per_node, int locks, RegcProgram program);

// Generates from options.seed and runs.
RegcRunResult run_random_regc_program(const SimOptions &options, const RegcShape &shape);

}  // namespace agora::simtest
