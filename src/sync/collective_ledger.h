// Collective calls must match across ranks: the k-th collective call of
// every rank must be the same operation (agora_alloc, agora_barrier,
// agora_reduce, agora_finalize). Each call gets a tag, its sequence number
// and kind, which its messages carry; a rank that
// receives a tag whose kind differs from its own call of that number ends
// the job naming both ranks and both calls. Without this, an extra barrier
// on one rank, or a rank reaching agora_finalize while another still waits
// in a barrier, would leave the job hanging with no message.
//
// Tag 0 means "not checked" (the simulator's programs do not use tags).
#pragma once
#include <cstdint>
#include <map>
#include <utility>

#include "common/types.h"

namespace agora {

enum class CollectiveKind : uint8_t { None = 0, Barrier, Reduce, Alloc, Finalize, GptrAlloc };
const char *collective_name(CollectiveKind kind);

class CollectiveLedger {
 public:
  // Starts this rank's next collective call; returns its tag.
  uint64_t begin(CollectiveKind kind);
  // Another rank's message of its collective call `tag`: ends the job if
  // this rank's call of the same number is (or was) of another kind.
  void observe(Rank from, uint64_t tag);

  static uint64_t sequence_of(uint64_t tag) { return tag >> 8; }
  static CollectiveKind kind_of(uint64_t tag) { return (CollectiveKind)(tag & 0xff); }

 private:
  [[noreturn]] void mismatch(uint64_t sequence, CollectiveKind mine, Rank from, CollectiveKind theirs);

  uint64_t sequence_ = 0;  // of the last call this rank began
  // Recent calls of this rank (a peer's message is at most one call ahead
  // or behind: a collective completes only once every rank has joined it).
  std::map<uint64_t, CollectiveKind> mine_;
  // Calls of other ranks this rank has not reached yet.
  std::map<uint64_t, std::pair<Rank, CollectiveKind>> ahead_;
};

}  // namespace agora
