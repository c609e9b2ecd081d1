// The Sequencer (Themis section 2.3): ordered delivery over an unordered
// network. Every request to a home carries the next number of the pair's
// outbound counter; the home applies a pair's requests in number order,
// holding early ones in a reorder buffer, and takes the in-order arrival's
// fast path without buffering. Nothing is cached and nothing stalls the
// requester: order is restored where the requests are applied.
//
// Each request is answered (a read with its bytes, a write with an
// acknowledgement naming it), so a drain waits until every request has its
// answer, as the paper's barrier compares outbound and acknowledgement counts.
#pragma once
#include <map>
#include <unordered_map>
#include <vector>

#include "gptr/gptr_engine.h"

namespace agora::gptr {

class SequencerEngine final : public Engine {
 public:
  SequencerEngine(Host &host, const Options &options);
  Scheme scheme() const override { return Scheme::Sequencer; }
  bool try_now(const Op &op) override;
  void issue(const Op &op) override;
  void on_message(const MsgHeader &m, Payload p) override;
  void drain(std::function<void()> done) override;
  bool idle() const override { return pending_.empty(); }

 private:
  struct Early {
    MsgHeader header;
    std::vector<std::byte> payload;
  };
  struct Pending {
    Op op;
    uint64_t op_offset;
    bool has_op;
    uint64_t group;
  };
  void apply(const MsgHeader &m, Payload p);
  void check_drain();

  std::vector<uint32_t> outbound_;                // next sequence number to each home
  std::vector<uint32_t> inbound_;                 // next sequence number expected from each rank
  std::vector<std::map<uint32_t, Early>> early_;  // per sender: arrived before their turn
  uint64_t buffered_ = 0;                         // requests in all reorder buffers
  std::unordered_map<uint64_t, Pending> pending_;
  std::unordered_map<uint64_t, uint32_t> chunks_left_;
  uint64_t next_id_ = 1;
  std::function<void()> drained_;
};

}  // namespace agora::gptr
