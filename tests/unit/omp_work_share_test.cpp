// The OpenMP runtime's work-share protocol (src/omp/omp_schedule.h,
// src/omp/omp_work_share_state.h): loop counting against the serial loop,
// and a team of virtual members running a random sequence of work-sharing
// constructs (loops of every schedule, ordered or not, single, sections,
// with and without nowait) through the same steps the runtime takes under
// its team lock, in random interleavings, with a ring of only 2 slots so
// that slots are reused while members lag behind.
//
// The shadow model is the sequential meaning: every iteration of every loop
// runs exactly once, a static chunk k on member k mod n, ordered regions in
// iteration order, each single once, each section once; a slot is set up
// again only once every member has left the work-share it held; and the
// team never deadlocks. Mutations (the ordered region without waiting for
// the turn; a slot reused while a member has not left it) must be caught.
#include <gtest/gtest.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "omp/omp_schedule.h"
#include "omp/omp_work_share_state.h"

using namespace agora::omp;

namespace {

// ---- loop counting --------------------------------------------------------

std::vector<uint64_t> serial_long(long start, long end, long incr) {
  std::vector<uint64_t> values;
  if (incr > 0)
    for (__int128 v = start; v < end; v += incr) values.push_back((uint64_t)(long)v);
  else
    for (__int128 v = start; v > end; v += incr) values.push_back((uint64_t)(long)v);
  return values;
}

TEST(OmpSchedule, LoopCountsAndValuesMatchTheSerialLoop) {
  std::mt19937_64 rng(7);
  const long bases[] = {0, -50, 1000, LONG_MAX - 40, LONG_MIN + 40};
  for (int trial = 0; trial < 2000; trial++) {
    long base = bases[rng() % 5];
    long start = base + (long)(rng() % 41) - 20, end = base + (long)(rng() % 41) - 20;
    if ((base == LONG_MAX - 40 && (start > LONG_MAX - 20 || end > LONG_MAX - 20)) ||
        (base == LONG_MIN + 40 && (start < LONG_MIN + 20 || end < LONG_MIN + 20)))
      continue;
    long incr = (long)(rng() % 7) + 1;
    if (rng() % 2) incr = -incr;
    LoopBounds b{false, incr > 0, (uint64_t)start, (uint64_t)end, (uint64_t)incr};
    std::vector<uint64_t> serial = serial_long(start, end, incr);
    uint64_t count = loop_count(b);
    ASSERT_EQ(count, serial.size()) << start << " " << end << " " << incr;
    for (uint64_t i = 0; i < count; i++) ASSERT_EQ(loop_value(b, count, i), serial[i]);
    if (count) {
      EXPECT_EQ(loop_value(b, count, count), (uint64_t)end);
    }
  }
  // unsigned long long, both directions (down: incr negative, two's complement)
  LoopBounds up{true, true, 3, 20, 4};
  EXPECT_EQ(loop_count(up), 5u);  // 3 7 11 15 19
  LoopBounds down{true, false, 20, 3, (uint64_t)-4};
  EXPECT_EQ(loop_count(down), 5u);  // 20 16 12 8 4
  EXPECT_EQ(loop_value(down, 5, 4), 4u);
  LoopBounds huge{true, true, 0, ULLONG_MAX, 1};
  EXPECT_EQ(loop_count(huge), ULLONG_MAX);
  LoopBounds wide{false, true, (uint64_t)LONG_MIN, (uint64_t)LONG_MAX, 1};
  EXPECT_EQ(loop_count(wide), ULLONG_MAX);
}

TEST(OmpSchedule, ParsesOmpSchedule) {
  Schedule kind;
  uint64_t chunk;
  ASSERT_TRUE(parse_schedule("dynamic,4", &kind, &chunk));
  EXPECT_EQ(kind, Schedule::Dynamic);
  EXPECT_EQ(chunk, 4u);
  ASSERT_TRUE(parse_schedule("nonmonotonic:GUIDED", &kind, &chunk));
  EXPECT_EQ(kind, Schedule::Guided);
  EXPECT_EQ(chunk, 0u);
  ASSERT_TRUE(parse_schedule(" static , 16 ", &kind, &chunk));
  EXPECT_EQ(chunk, 16u);
  EXPECT_FALSE(parse_schedule("dynamic,0", &kind, &chunk));
  EXPECT_FALSE(parse_schedule("auto,3", &kind, &chunk));
  EXPECT_FALSE(parse_schedule("fastest", &kind, &chunk));
  EXPECT_FALSE(parse_schedule("static,4x", &kind, &chunk));
}

// ---- a team of virtual members --------------------------------------------

enum class Mutation { None, OrderedWithoutTurn, SlotReusedEarly };

struct Construct {
  enum Kind { Loop, Single, Sections } kind;
  Schedule schedule = Schedule::Static;
  bool ordered = false, nowait = false;
  uint64_t count = 0, chunk = 0;
};

constexpr unsigned kRing = 2;

struct Member {
  size_t pc = 0;  // the construct it is in
  enum Phase { Start, Work, Leave, Barrier, Finished } phase = Start;
  WorkShare *ws = nullptr;
  WorkShare own{};  // a static loop without ordered: nothing shared
  ChunkCursor cursor{};
  uint64_t lo = 0, hi = 0;
  uint64_t ws_next = 0, single_next = 0, barriers = 0;
  bool arrived = false;
};

class Team {
 public:
  Team(unsigned n, std::vector<Construct> program, Mutation mutation, uint64_t seed)
      : n_(n), program_(std::move(program)), mutation_(mutation), rng_(seed), members_(n) {
    runs_.resize(program_.size());
    logs_.resize(program_.size());
    slot_ids_.assign(kRing, 0);
    left_.resize(program_.size() + 1);
    for (size_t i = 0; i < program_.size(); i++) runs_[i].assign(program_[i].count + 1, 0);
  }

  // Runs to the end; "" if the shadow model holds, else what broke.
  std::string run() {
    for (int steps = 0; steps < 1000000; steps++) {
      std::vector<unsigned> ready;
      for (unsigned m = 0; m < n_; m++)
        if (members_[m].phase != Member::Finished) ready.push_back(m);
      if (ready.empty()) return check_end();
      // Random member; if it cannot move, others are tried in turn.
      size_t first = rng_() % ready.size();
      bool moved = false;
      for (size_t k = 0; k < ready.size() && !moved && error_.empty(); k++)
        moved = step(ready[(first + k) % ready.size()]);
      if (!error_.empty()) return error_;
      if (!moved) return "deadlock: no member can move";
    }
    return "did not finish";
  }

 private:
  // One step of member m, as one hold of the team's lock; false if it must wait.
  bool step(unsigned m) {
    Member &me = members_[m];
    const Construct &c = program_[me.pc];
    switch (me.phase) {
      case Member::Start:
        return start(m, me, c);
      case Member::Work:
        return work(m, me, c);
      case Member::Leave:
        return leave(me, c);
      case Member::Barrier:
        return barrier(me);
      case Member::Finished:
        return false;
    }
    return false;
  }

  bool plain_static(const Construct &c) const {
    return c.kind == Construct::Loop && c.schedule == Schedule::Static && !c.ordered;
  }

  bool enter(Member &me, const Construct &c) {
    uint64_t id = me.ws_next + 1;
    WorkShare *ws = &ring_[(id - 1) % kRing];
    SlotEntry entry;
    if (mutation_ == Mutation::SlotReusedEarly && ws->id != id) {
      *ws = WorkShare{};
      ws->id = id;
      entry = SlotEntry::SetUp;
    } else {
      entry = slot_enter(ws, id, n_);
    }
    if (entry == SlotEntry::Busy) return false;
    me.ws_next = id;
    if (entry == SlotEntry::SetUp) {
      uint64_t old = slot_ids_[(id - 1) % kRing];
      if (old && left_[old] != n_)
        fail("slot of work-share " + std::to_string(old) + " set up again for " + std::to_string(id) + " while only " +
             std::to_string(left_[old]) + " members had left it");
      slot_ids_[(id - 1) % kRing] = id;
      setup(ws, c);
    }
    me.ws = ws;
    return true;
  }

  static void setup(WorkShare *ws, const Construct &c) {
    ws->kind = c.kind == Construct::Sections ? WorkKind::Sections : WorkKind::Loop;
    ws->schedule = c.kind == Construct::Sections ? Schedule::Dynamic : c.schedule;
    ws->ordered = c.ordered;
    ws->count = c.count;
    ws->chunk = c.chunk;
    if (ws->schedule != Schedule::Static && ws->chunk < 1) ws->chunk = 1;
  }

  bool start(unsigned m, Member &me, const Construct &c) {
    me.cursor = ChunkCursor{};
    me.cursor.static_next = m;
    if (c.kind == Construct::Single) {
      if (single_take(&single_taken_, ++me.single_next)) runs_[me.pc][0]++;
      me.phase = c.nowait ? next_construct(me) : Member::Barrier;
      return true;
    }
    if (plain_static(c)) {
      me.own = WorkShare{};
      setup(&me.own, c);
      me.ws = &me.own;
    } else if (!enter(me, c)) {
      return false;
    }
    if (c.kind == Construct::Sections) {
      while (unsigned s = section_take(me.ws)) runs_[me.pc][s - 1]++;
      me.phase = Member::Leave;
      return true;
    }
    take(m, me);
    return true;
  }

  void take(unsigned m, Member &me) {
    uint64_t before = me.cursor.static_next;
    if (chunk_take(me.ws, &me.cursor, n_, &me.lo, &me.hi)) {
      if (me.ws->schedule == Schedule::Static && before % n_ != m)
        fail("static chunk " + std::to_string(before) + " on member " + std::to_string(m));
      me.phase = Member::Work;
    } else {
      me.phase = Member::Leave;
    }
  }

  // The chunk's iterations (and, ordered, their ordered regions: the turn
  // cannot move while this member holds it), then the finish and next take.
  bool work(unsigned m, Member &me, const Construct &c) {
    if (c.ordered) {
      bool turn = ordered_my_turn(me.ws, &me.cursor);
      if (!turn && mutation_ != Mutation::OrderedWithoutTurn) return false;
      for (uint64_t i = me.lo; i < me.hi; i++) logs_[me.pc].push_back(i);
      if (turn)
        ordered_pass(me.ws, &me.cursor);
      else
        me.cursor.holds_chunk = false;
    }
    for (uint64_t i = me.lo; i < me.hi; i++) runs_[me.pc][i]++;
    take(m, me);
    return true;
  }

  bool leave(Member &me, const Construct &c) {
    if (!plain_static(c)) {
      slot_leave(me.ws, n_);
      left_[me.ws_next]++;
    }
    me.phase = c.nowait ? next_construct(me) : Member::Barrier;
    return true;
  }

  bool barrier(Member &me) {
    uint64_t round = me.barriers;
    if (arrived_.size() <= round) arrived_.resize(round + 1, 0);
    if (!me.arrived) {
      arrived_[round]++;
      me.arrived = true;
      return true;
    }
    if (arrived_[round] < n_) return false;
    me.arrived = false;
    me.barriers++;
    me.phase = next_construct(me);
    return true;
  }

  Member::Phase next_construct(Member &me) {
    me.pc++;
    return me.pc < program_.size() ? Member::Start : Member::Finished;
  }

  void fail(const std::string &what) {
    if (error_.empty()) error_ = what;
  }

  std::string check_end() {
    for (size_t p = 0; p < program_.size(); p++) {
      const Construct &c = program_[p];
      std::ostringstream where;
      where << "construct " << p << " ("
            << (c.kind == Construct::Loop     ? "loop"
                : c.kind == Construct::Single ? "single"
                                              : "sections")
            << ")";
      if (c.kind == Construct::Single) {
        if (runs_[p][0] != 1) return where.str() + " ran " + std::to_string(runs_[p][0]) + " times";
        continue;
      }
      for (uint64_t i = 0; i < c.count; i++)
        if (runs_[p][i] != 1)
          return where.str() + ": iteration " + std::to_string(i) + " ran " + std::to_string(runs_[p][i]) + " times";
      if (c.ordered) {
        if (logs_[p].size() != c.count) return where.str() + ": ordered log incomplete";
        for (uint64_t i = 0; i < c.count; i++)
          if (logs_[p][i] != i)
            return where.str() + ": ordered region of iteration " + std::to_string(logs_[p][i]) + " ran in place " +
                   std::to_string(i);
      }
    }
    return "";
  }

  unsigned n_;
  std::vector<Construct> program_;
  Mutation mutation_;
  std::mt19937_64 rng_;
  std::vector<Member> members_;
  WorkShare ring_[kRing]{};
  uint64_t single_taken_ = 0;
  std::vector<std::vector<int>> runs_;
  std::vector<std::vector<uint64_t>> logs_;
  std::vector<uint64_t> slot_ids_;  // shadow: the work-share each slot holds
  std::vector<unsigned> left_;      // shadow: members that left each work-share
  std::vector<unsigned> arrived_;
  std::string error_;
};

std::vector<Construct> random_program(std::mt19937_64 &rng) {
  std::vector<Construct> program;
  size_t length = 3 + rng() % 8;
  const Schedule schedules[] = {Schedule::Static, Schedule::Dynamic, Schedule::Guided};
  for (size_t i = 0; i < length; i++) {
    Construct c;
    unsigned kind = rng() % 6;
    c.kind = kind < 4 ? Construct::Loop : kind == 4 ? Construct::Single : Construct::Sections;
    c.nowait = rng() % 2;
    if (c.kind == Construct::Loop) {
      c.schedule = schedules[rng() % 3];
      c.ordered = rng() % 3 == 0;
      c.count = rng() % 40;
      c.chunk = rng() % 4 == 0 ? 0 : 1 + rng() % 6;
    } else if (c.kind == Construct::Sections) {
      c.count = 1 + rng() % 5;
    } else {
      c.count = 0;
    }
    program.push_back(c);
  }
  return program;
}

// One seed: a random team size and program; "" if the shadow model held.
std::string run_seed(uint64_t seed, Mutation mutation) {
  std::mt19937_64 rng(seed);
  unsigned n = 1 + rng() % 5;
  std::vector<Construct> program = random_program(rng);
  if (mutation == Mutation::OrderedWithoutTurn) {  // give the mutation something to break
    n = 2 + rng() % 4;
    program.push_back(Construct{Construct::Loop, Schedule::Dynamic, true, false, 30, 1});
  }
  if (mutation == Mutation::SlotReusedEarly) {
    n = 2 + rng() % 4;
    for (int k = 0; k < 3; k++) program.push_back(Construct{Construct::Loop, Schedule::Dynamic, false, true, 20, 1});
  }
  Team team(n, program, mutation, seed * 7919 + 1);
  return team.run();
}

uint64_t seeds_to_run() {
  const char *text = getenv("AGORA_SIM_SEEDS");
  return text && atoi(text) > 0 ? (uint64_t)atoi(text) : 400;
}

}  // namespace

TEST(OmpWorkShare, RandomTeamsHoldTheShadowModel) {
  if (const char *one = getenv("AGORA_SIM_SEED")) {
    std::string error = run_seed(strtoull(one, nullptr, 10), Mutation::None);
    EXPECT_EQ(error, "") << "seed " << one;
    return;
  }
  for (uint64_t seed = 1; seed <= seeds_to_run(); seed++) {
    std::string error = run_seed(seed, Mutation::None);
    ASSERT_EQ(error, "") << "seed " << seed << " (replay: AGORA_SIM_SEED=" << seed
                         << " unit_tests --gtest_filter=OmpWorkShare.*)";
  }
}

// Each mutation must be caught by some seed of the first 200.
void expect_caught(Mutation mutation, const char *name) {
  int caught = 0;
  std::string example;
  for (uint64_t seed = 1; seed <= 200; seed++) {
    std::string error = run_seed(seed, mutation);
    if (!error.empty()) {
      caught++;
      if (example.empty()) example = error;
    }
  }
  EXPECT_GT(caught, 0) << name << " was never caught";
  printf("%s: caught in %d of 200 seeds (e.g. %s)\n", name, caught, example.c_str());
}

TEST(OmpWorkShare, MutationOrderedWithoutTheTurnIsCaught) {
  expect_caught(Mutation::OrderedWithoutTurn, "ordered region without the turn");
}

TEST(OmpWorkShare, MutationSlotReusedEarlyIsCaught) {
  expect_caught(Mutation::SlotReusedEarly, "slot reused before every member left");
}
