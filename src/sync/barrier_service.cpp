#include "sync/barrier_service.h"

#include "common/stats.h"

namespace agora {

void BarrierService::arrive(Waiter *w) {
  host_.stats().barriers++;
  ++epoch_;
  round_ = 0;
  waiter_ = w;
  if (host_.nranks() == 1) {
    waiter_ = nullptr;
    w->complete(0);
    return;
  }
  send_round();
  advance();
}

void BarrierService::send_round() {
  Rank n = host_.nranks();
  Rank to = (Rank)((host_.rank() + (1u << round_)) % (unsigned)n);
  host_.send(to, {Channel::Barrier, 0, 0, epoch_, round_, 0});
}

void BarrierService::on_message(const MsgHeader &m) {
  arrived_[{m.a, (unsigned)m.b}]++;
  advance();
}

void BarrierService::advance() {
  while (waiter_) {
    auto it = arrived_.find({epoch_, round_});
    if (it == arrived_.end()) return;
    if (--it->second == 0) arrived_.erase(it);
    ++round_;
    if ((1u << round_) >= (unsigned)host_.nranks()) {
      Waiter *w = waiter_;
      waiter_ = nullptr;
      w->complete(0);
      return;
    }
    send_round();
  }
}

}  // namespace agora
