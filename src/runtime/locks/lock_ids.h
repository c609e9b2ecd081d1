// Lock ids (agora_lock_array_create): collective creations take
// consecutive ids from 0, each run with a signature of the creating call
// (its site, how many creations before it, its size), with which lock
// managers check that every rank created the same locks (LockService);
// an agora thread's creations (not collective) take ids of this rank's own,
// clear of the collective ones. This class owns the ids handed out and the
// creations' record; it needs nothing of the rank (the runtime passes the
// rank and calls it with its lock held), so unit tests drive it directly
// (tests/unit/lock_ids_test.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "common/types.h"

namespace agora {

class LockIds {
 public:
  // Ids from `limit` up are not lock ids (the runtime's: the addresses of
  // address-named locks).
  explicit LockIds(uint64_t limit) : limit_(limit) {}
  // The first of `count` new ids, or UINT64_MAX (said why) when the
  // collective ids would reach the limit. by_agora_thread: a creation by
  // an agora thread of rank `rank`, which no other rank makes with it.
  uint64_t create(uint64_t count, uint64_t call_site, bool by_agora_thread, Rank rank);
  // The signature of a collectively created lock, or 0 for any other id.
  uint64_t signature(uint64_t id) const;

 private:
  struct Creation {
    uint64_t first, count, signature;
  };
  uint64_t limit_;
  uint64_t next_ = 0;                // collective ids handed out
  uint64_t next_thread_ = 0;         // ids of locks created by agora threads
  std::vector<Creation> creations_;  // collective creations of this rank, in id order
};

}  // namespace agora
