#include "sync/collective_ledger.h"

#include "common/log.h"

namespace agora {

const char *collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::Barrier:
      return "agora_barrier";
    case CollectiveKind::Reduce:
      return "agora_reduce";
    case CollectiveKind::Alloc:
      return "agora_alloc";
    case CollectiveKind::Finalize:
      return "agora_finalize";
    case CollectiveKind::GptrAlloc:
      return "agora_gptr_alloc";
    default:
      return "no collective call";
  }
}

uint64_t CollectiveLedger::begin(CollectiveKind kind) {
  ++sequence_;
  mine_[sequence_] = kind;
  while (mine_.size() > 4) mine_.erase(mine_.begin());
  auto early = ahead_.find(sequence_);
  if (early != ahead_.end()) {
    if (early->second.second != kind) mismatch(sequence_, kind, early->second.first, early->second.second);
    ahead_.erase(early);
  }
  return sequence_ << 8 | (uint64_t)kind;
}

void CollectiveLedger::observe(Rank from, uint64_t tag) {
  if (tag == 0) return;
  uint64_t sequence = sequence_of(tag);
  CollectiveKind kind = kind_of(tag);
  auto own = mine_.find(sequence);
  if (own != mine_.end()) {
    if (own->second != kind) mismatch(sequence, own->second, from, kind);
    return;
  }
  if (sequence > sequence_) ahead_.emplace(sequence, std::make_pair(from, kind));
}

void CollectiveLedger::mismatch(uint64_t sequence, CollectiveKind mine, Rank from, CollectiveKind theirs) {
  const char *hint = "";
  if (theirs == CollectiveKind::Finalize)
    hint = " (it reached agora_finalize while this rank's call can no longer complete)";
  else if (mine == CollectiveKind::Finalize)
    hint = " (this rank reached agora_finalize while that call can no longer complete)";
  fatal(
      "collective calls do not match: this rank's collective call #%llu is %s, rank %d's is %s%s. "
      "Every rank must make the same collective calls (agora_alloc, agora_barrier, agora_reduce, "
      "agora_finalize) in the same order",
      (unsigned long long)sequence, collective_name(mine), from, collective_name(theirs), hint);
}

}  // namespace agora
