#include "sync/reduce_service.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "common/status.h"

namespace agora {

namespace {
template <typename T>
void combine(T *acc, const T *in, size_t n, ReduceOp op) {
  for (size_t i = 0; i < n; ++i) {
    switch (op) {
      case ReduceOp::Sum:
        acc[i] += in[i];
        break;
      case ReduceOp::Min:
        acc[i] = std::min(acc[i], in[i]);
        break;
      case ReduceOp::Max:
        acc[i] = std::max(acc[i], in[i]);
        break;
    }
  }
}
const char *type_name(uint64_t t) { return t == (uint64_t)ReduceType::Int64 ? "int64" : "double"; }
const char *op_name(uint64_t o) {
  return o == (uint64_t)ReduceOp::Sum ? "sum" : o == (uint64_t)ReduceOp::Min ? "min" : "max";
}
}  // namespace

uint64_t ReduceService::shape_of(size_t count, ReduceType type, ReduceOp op) const {
  return (uint64_t)count | (uint64_t)type << 56 | (uint64_t)op << 60;
}

int ReduceService::start(void *data, size_t count, ReduceType type, ReduceOp op, Waiter *w, uint64_t tag) {
  if (waiter_) return AGORA_ERR_MISUSE;
  tag_ = tag;
  ++epoch_;
  data_ = data;
  count_ = count;
  type_ = type;
  op_ = op;
  waiter_ = w;
  Payload mine{(const std::byte *)data, count * 8};
  uint64_t shape = shape_of(count, type, op);
  if (host_.rank() == 0) {
    root_add(epoch_, 0, shape, mine);
  } else {
    host_.send(0, {Channel::Reduce, kContribute, 0, epoch_, shape, tag_}, mine);
  }
  return AGORA_OK;
}

void ReduceService::on_message(const MsgHeader &m, Payload p) {
  if (ledger_) ledger_->observe(m.src, m.c);
  if (m.op == kContribute)
    root_add(m.a, m.src, m.b, p);
  else
    deliver(p);
}

void ReduceService::check_shapes(const std::vector<Contribution> &slots) const {
  for (Rank r = 1; r < host_.nranks(); ++r) {
    uint64_t a = slots[0].shape, b = slots[r].shape;
    if (a == b && slots[r].data.size() == count_ * 8) continue;
    uint64_t mask = (1ull << 56) - 1;
    fatal(
        "agora_reduce is collective: ranks passed different arguments (rank 0: %llu x %s %s, "
        "rank %d: %llu x %s %s)",
        (unsigned long long)(a & mask), type_name(a >> 56 & 15), op_name(a >> 60), r, (unsigned long long)(b & mask),
        type_name(b >> 56 & 15), op_name(b >> 60));
  }
}

void ReduceService::root_add(uint64_t epoch, Rank from, uint64_t shape, Payload p) {
  auto &slots = contributions_[epoch];
  slots.resize(host_.nranks());
  slots[from].shape = shape;
  slots[from].data.assign(p.data, p.data + p.size);
  // The root can only combine once it has entered this reduce itself.
  if (++received_[epoch] < (unsigned)host_.nranks() || epoch != epoch_ || !waiter_) return;
  check_shapes(slots);
  std::vector<std::byte> acc = slots[0].data;
  for (Rank r = 1; r < host_.nranks(); ++r) {
    if (type_ == ReduceType::Int64)
      combine((int64_t *)acc.data(), (const int64_t *)slots[r].data.data(), count_, op_);
    else
      combine((double *)acc.data(), (const double *)slots[r].data.data(), count_, op_);
  }
  contributions_.erase(epoch);
  received_.erase(epoch);
  Payload result{acc.data(), acc.size()};
  for (Rank r = 1; r < host_.nranks(); ++r) host_.send(r, {Channel::Reduce, kResult, 0, epoch, count_, tag_}, result);
  deliver(result);
}

void ReduceService::deliver(Payload result) {
  std::memcpy(data_, result.data, std::min(result.size, count_ * 8));
  Waiter *w = waiter_;
  waiter_ = nullptr;
  w->complete(AGORA_OK);
}

}  // namespace agora
