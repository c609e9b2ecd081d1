// Dissemination barrier: in round k rank r signals rank r+2^k and waits for
// rank r-2^k; ceil(log2 N) rounds, no central rank. Messages carry the
// barrier's epoch so an early signal for the next barrier is kept, not lost.
#pragma once
#include <map>
#include <utility>

#include "transport/message.h"

namespace agora {

class BarrierService {
 public:
  explicit BarrierService(ComponentHost &host) : host_(host) {}
  void arrive(Waiter *w);
  void on_message(const MsgHeader &m);

 private:
  void send_round();
  void advance();

  ComponentHost &host_;
  uint64_t epoch_ = 0;  // barriers this rank has entered
  unsigned round_ = 0;
  Waiter *waiter_ = nullptr;
  std::map<std::pair<uint64_t, unsigned>, unsigned> arrived_;  // (epoch, round) -> signals
};

}  // namespace agora
