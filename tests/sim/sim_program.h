// Random programs run on the simulated cluster, and the scheduler that runs
// them: virtual threads on every node issue reads, writes, lock-protected
// increments and barriers; the scheduler interleaves thread steps with
// message deliveries, all chosen by the seed. Every read is checked by a
// model-specific oracle (see sim_sc_test.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/sim_cluster.h"

namespace agora::simtest {

enum class OpKind {
  Read,
  Write,
  Lock,
  ReadToRegister,
  WriteRegisterPlusOne,
  Unlock,
  Barrier,
  ThreadBarrier,  // every thread of every node: word = the word naming the barrier, value = count
  SemPost,        // word = semaphore index (its own address past the pages)
  SemWait,
};
struct Op {
  OpKind kind;
  uint64_t word = 0;  // global word index for memory ops; lock id for lock ops
  uint64_t value = 0;
};

struct ProgramShape {
  int threads_per_node = 2;
  int phases = 4;  // separated by barriers
  int ops_per_phase = 40;
  int locks = 2;  // each guards one counter word
  double lock_fraction = 0.15;
  double write_fraction = 0.4;
  // Data-race-free programs, for relaxed models: in each phase every plain
  // word is either read-only or owned (read and written) by one thread, and a
  // quarter of the words are guarded by locks and touched only while holding
  // theirs. Different threads still write neighbouring words of one page.
  bool data_race_free = false;
  // Fraction of phases ended by a thread barrier (ThreadBarrierService, one
  // object over all threads of all nodes) instead of the node-level barrier.
  // 0 keeps the programs of a seed as they were before thread barriers.
  double thread_barrier_fraction = 0;
  // Race-free programs only: per phase, up to this many semaphore hand-offs.
  // The producer writes some of its words then posts; the consumer waits,
  // reads them (it must see the producer's values: the post is a release,
  // the wait it satisfies an acquire) and owns them for the rest of the phase.
  int handoffs_per_phase = 0;
  // A program written by the test instead (one op list per thread, node by
  // node; data-race-free, no locks): e.g. an owner-computes sweep.
  std::vector<std::vector<Op>> given;
  // Racy programs only: fraction of plain operations that become a sweep, a
  // read or write of one word in each of a run of consecutive pages, in
  // order (what sequential misses look like: sc prefetches and batches
  // them). 0 keeps the programs of a seed as they were before sweeps.
  double sweep_fraction = 0;
};

struct RunResult {
  bool ok = true;
  std::string failure;  // what went wrong, with the seed, for replay
  uint64_t steps = 0;
  uint64_t messages = 0;
  // Every node's statistics combined; read_faults and write_faults count
  // the accesses that went to the engine.
  Stats totals;
};

// Checks a read: given node, word and the value the node saw, returns an
// empty string if the model allows it, else a description.
using ReadOracle = std::function<std::string(Rank node, uint64_t word, uint64_t seen)>;
using WriteObserver = std::function<void(Rank node, uint64_t word, uint64_t value)>;

// Generates a program for every thread from the cluster's seed and runs it.
RunResult run_random_program(SimCluster &cluster, const ProgramShape &shape, const ReadOracle &check_read,
                             const WriteObserver &on_write);

// Runs a program checking every read against the latest write in the
// simulator's execution order. Under sc that is the model itself; for a
// data-race-free program it is also what release consistency requires,
// since every read then has exactly one write it may return.
RunResult run_against_latest_write(const SimOptions &options, const ProgramShape &shape);

}  // namespace agora::simtest
