// Dissemination barrier: in round k rank r signals rank r+2^k and waits for
// rank r-2^k; ceil(log2 N) rounds, no central rank. Messages carry the
// barrier's epoch so an early signal for the next barrier is kept, not lost.
// Under a protocol that carries consistency, a rank first publishes its
// writes, and every signal carries what its sender knows (write notices), so
// after the last round every rank has seen every rank's writes.
#pragma once
#include <map>
#include <utility>

#include "protocol/engine.h"
#include "sync/collective_ledger.h"
#include "transport/message.h"

namespace agora {

class BarrierService {
 public:
  explicit BarrierService(ComponentHost &host) : host_(host) {}
  void attach(ProtocolEngine *engine) { engine_ = engine; }
  // Messages carry collective tags, checked against this ledger (may be null).
  void attach(CollectiveLedger *ledger) { ledger_ = ledger; }
  // Completes *w when every rank has arrived. Returns AGORA_ERR_MISUSE,
  // without arriving, if a thread of this rank is already in the barrier.
  int arrive(Waiter *w, uint64_t tag = 0);
  bool waiting() const { return waiter_ != nullptr; }
  // For hang reports: the epoch, and the rank whose signal this rank awaits.
  uint64_t epoch() const { return epoch_; }
  Rank awaited_rank() const;
  void on_message(const MsgHeader &m, Payload p);

 private:
  bool carries_consistency() const { return engine_ && engine_->carries_consistency(); }
  void start_rounds();
  void send_round();
  void advance();
  void finish();

  ComponentHost &host_;
  ProtocolEngine *engine_ = nullptr;
  CollectiveLedger *ledger_ = nullptr;
  uint64_t tag_ = 0;    // of the barrier in progress
  uint64_t epoch_ = 0;  // barriers this rank has entered
  unsigned round_ = 0;
  bool started_ = false;  // this rank's writes are published; rounds may run
  Waiter *waiter_ = nullptr;
  std::map<std::pair<uint64_t, unsigned>, unsigned> arrived_;  // (epoch, round) -> signals
};

}  // namespace agora
