#include "sync/reduce_service.h"

#include <algorithm>
#include <cstring>

namespace agora {

namespace {
template <typename T>
void combine(T *acc, const T *in, size_t n, ReduceOp op) {
  for (size_t i = 0; i < n; ++i) {
    switch (op) {
      case ReduceOp::Sum: acc[i] += in[i]; break;
      case ReduceOp::Min: acc[i] = std::min(acc[i], in[i]); break;
      case ReduceOp::Max: acc[i] = std::max(acc[i], in[i]); break;
    }
  }
}
}  // namespace

void ReduceService::start(void *data, size_t count, ReduceType type, ReduceOp op, Waiter *w) {
  ++epoch_;
  data_ = data;
  count_ = count;
  type_ = type;
  op_ = op;
  waiter_ = w;
  Payload mine{(const std::byte *)data, count * 8};
  if (host_.rank() == 0) {
    root_add(epoch_, 0, mine);
  } else {
    host_.send(0, {Channel::Reduce, kContribute, 0, epoch_, count, 0}, mine);
  }
}

void ReduceService::on_message(const MsgHeader &m, Payload p) {
  if (m.op == kContribute) root_add(m.a, m.src, p);
  else deliver(p);
}

void ReduceService::root_add(uint64_t epoch, Rank from, Payload p) {
  auto &slots = contributions_[epoch];
  slots.resize(host_.nranks());
  slots[from].assign(p.data, p.data + p.size);
  // The root can only combine once it has entered this reduce itself.
  if (++received_[epoch] < (unsigned)host_.nranks() || epoch != epoch_ || !waiter_) return;
  std::vector<std::byte> acc = slots[0];
  for (Rank r = 1; r < host_.nranks(); ++r) {
    if (type_ == ReduceType::Int64)
      combine((int64_t *)acc.data(), (const int64_t *)slots[r].data(), count_, op_);
    else
      combine((double *)acc.data(), (const double *)slots[r].data(), count_, op_);
  }
  contributions_.erase(epoch);
  received_.erase(epoch);
  Payload result{acc.data(), acc.size()};
  for (Rank r = 1; r < host_.nranks(); ++r)
    host_.send(r, {Channel::Reduce, kResult, 0, epoch, count_, 0}, result);
  deliver(result);
}

void ReduceService::deliver(Payload result) {
  std::memcpy(data_, result.data, std::min(result.size, count_ * 8));
  Waiter *w = waiter_;
  waiter_ = nullptr;
  w->complete(0);
}

}  // namespace agora
