// What thread barriers and semaphores hand their acquirers: the release info
// (write notices) of the ranks that released into the object, newest per
// rank. A rank's newer info covers its older (it is everything that rank had
// seen), so one per rank suffices; an acquirer applies each in turn (the
// engine skips what it has already seen). Under a protocol that carries no
// consistency (sc) it stays empty and costs nothing.
#pragma once
#include <cstddef>
#include <map>
#include <vector>

#include "protocol/engine.h"
#include "transport/message.h"

namespace agora {

class ReleaseBundles {
 public:
  void keep(Rank from, Payload info);
  // Every kept info except `recipient`'s own (it has seen its own writes),
  // as {u64 size, bytes}*.
  void encode_for(Rank recipient, std::vector<std::byte> *out) const;
  void clear() { by_rank_.clear(); }
  // Applies an encoded set with engine.acquire, one info at a time. False if malformed.
  static bool apply(ProtocolEngine &engine, Payload encoded);

 private:
  std::map<Rank, std::vector<std::byte>> by_rank_;
};

}  // namespace agora
