#include "sync/barrier_service.h"

#include <vector>

#include "common/log.h"
#include "common/stats.h"
#include "common/status.h"

namespace agora {

int BarrierService::arrive(Waiter *w, uint64_t tag) {
  if (waiter_) return AGORA_ERR_MISUSE;
  host_.stats().barriers++;
  tag_ = tag;
  ++epoch_;
  round_ = 0;
  started_ = false;
  waiter_ = w;
  if (carries_consistency())
    engine_->barrier_arrive(epoch_, [this] { start_rounds(); });
  else
    start_rounds();
  return AGORA_OK;
}

Rank BarrierService::awaited_rank() const {
  Rank n = host_.nranks();
  return (Rank)(((int64_t)host_.rank() - (1ll << round_) % n + n) % n);
}

void BarrierService::start_rounds() {
  started_ = true;
  if (host_.nranks() == 1) {
    finish();
    return;
  }
  send_round();
  advance();
}

void BarrierService::send_round() {
  Rank n = host_.nranks();
  Rank to = (Rank)((host_.rank() + (1u << round_)) % (unsigned)n);
  std::vector<std::byte> info;
  if (carries_consistency()) engine_->barrier_info(epoch_, &info);
  host_.send(to, {Channel::Barrier, 0, 0, epoch_, round_, tag_}, {info.data(), info.size()});
}

void BarrierService::on_message(const MsgHeader &m, Payload p) {
  if (ledger_) ledger_->observe(m.src, m.c);
  // A signal is for the barrier this rank is in, or (early) the next one: no
  // rank finishes a barrier before every rank entered it, and each signal
  // is consumed before the barrier ends here.
  AGORA_ASSERT(m.a == epoch_ + 1 || (m.a == epoch_ && waiter_ != nullptr));
  AGORA_ASSERT(m.b < 64 && (1ull << m.b) < (uint64_t)host_.nranks());
  if (carries_consistency()) engine_->barrier_receive(m.a, p);
  arrived_[{m.a, (unsigned)m.b}]++;
  advance();
}

void BarrierService::advance() {
  while (waiter_ && started_) {
    auto it = arrived_.find({epoch_, round_});
    if (it == arrived_.end()) return;
    if (--it->second == 0) arrived_.erase(it);
    ++round_;
    if ((1u << round_) >= (unsigned)host_.nranks()) {
      finish();
      return;
    }
    send_round();
  }
}

void BarrierService::finish() {
  Waiter *w = waiter_;
  waiter_ = nullptr;
  if (carries_consistency()) engine_->barrier_complete(epoch_);
  w->complete(AGORA_OK);
}

}  // namespace agora
