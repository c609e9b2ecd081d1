#include "sync/thread_reduce_service.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/log.h"
#include "common/status.h"

namespace agora {

namespace {
constexpr uint64_t kCountMask = (uint64_t{1} << 48) - 1;

// acc[i] = acc[i] op in[i]: one left fold, so the order of the calls fixes
// the bits of a double sum.
void combine(std::byte *acc_bytes, const std::byte *in_bytes, size_t n, ReduceType type, ReduceOp op) {
  for (size_t i = 0; i < n; ++i) {
    if (type == ReduceType::Int64) {
      int64_t a, b;
      std::memcpy(&a, acc_bytes + i * 8, 8);
      std::memcpy(&b, in_bytes + i * 8, 8);
      // Sums wrap (two's complement) rather than overflow into undefined behaviour.
      int64_t r = op == ReduceOp::Sum   ? (int64_t)((uint64_t)a + (uint64_t)b)
                  : op == ReduceOp::Min ? std::min(a, b)
                                        : std::max(a, b);
      std::memcpy(acc_bytes + i * 8, &r, 8);
    } else {
      double a, b;
      std::memcpy(&a, acc_bytes + i * 8, 8);
      std::memcpy(&b, in_bytes + i * 8, 8);
      double r = op == ReduceOp::Sum ? a + b : op == ReduceOp::Min ? std::min(a, b) : std::max(a, b);
      std::memcpy(acc_bytes + i * 8, &r, 8);
    }
  }
}
}  // namespace

uint64_t ThreadReduceService::encode(Shape s) {
  return std::min<uint64_t>(s.n, kCountMask) | ((uint64_t)s.type & 15) << 48 | ((uint64_t)s.op & 15) << 52 |
         (uint64_t)s.valid << 56;
}

ThreadReduceService::Shape ThreadReduceService::decode(uint64_t bits) {
  return {bits & kCountMask, (ReduceType)(bits >> 48 & 15), (ReduceOp)(bits >> 52 & 15), (bits >> 56 & 1) != 0};
}

std::string ThreadReduceService::describe(Shape s) {
  char type[16], op[16];
  if (s.type == ReduceType::Int64)
    std::snprintf(type, sizeof type, "int64");
  else if (s.type == ReduceType::Double)
    std::snprintf(type, sizeof type, "double");
  else
    std::snprintf(type, sizeof type, "type %u", (unsigned)s.type);
  if (s.op == ReduceOp::Sum)
    std::snprintf(op, sizeof op, "sum");
  else if (s.op == ReduceOp::Min)
    std::snprintf(op, sizeof op, "min");
  else if (s.op == ReduceOp::Max)
    std::snprintf(op, sizeof op, "max");
  else
    std::snprintf(op, sizeof op, "op %u", (unsigned)s.op);
  char line[96];
  std::snprintf(line, sizeof line, "%llu x %s %s", (unsigned long long)s.n, type, op);
  return line;
}

void ThreadReduceService::init(uint64_t object, uint32_t count, Waiter *w) {
  request(object, kInit, count, (uint64_t)(uintptr_t)w);
}

void ThreadReduceService::destroy(uint64_t object, Waiter *w) { request(object, kDestroy, 0, (uint64_t)(uintptr_t)w); }

void ThreadReduceService::request(uint64_t object, Op op, uint64_t arg, uint64_t token) {
  Rank mgr = manager_of(object);
  if (mgr == host_.rank())
    manage(op, object, arg, mgr, token);
  else
    host_.send_request(mgr, {Channel::ThreadReduce, op, 0, object, token, arg});
}

void ThreadReduceService::reduce(uint64_t object, uint64_t thread_id, Shape shape, void *data, Waiter *w) {
  uint64_t token = (uint64_t)(uintptr_t)w;
  size_t bytes = shape.valid ? shape.n * 8 : 0;  // n <= kMaxElements: no overflow
  pending_[token] = {data, bytes};
  Rank mgr = manager_of(object);
  if (mgr == host_.rank()) {
    const std::byte *p = (const std::byte *)data;
    contribute(object, {mgr, token, thread_id, shape, std::vector<std::byte>(p, p + bytes)});
    return;
  }
  // The payload: the thread id, then the values.
  std::vector<std::byte> payload(8 + bytes);
  std::memcpy(payload.data(), &thread_id, 8);
  if (bytes) std::memcpy(payload.data() + 8, data, bytes);
  host_.send_request(mgr, {Channel::ThreadReduce, kContribute, 0, object, token, encode(shape)},
                     {payload.data(), payload.size()});
}

void ThreadReduceService::on_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kInit:
    case kDestroy:
      manage((Op)m.op, m.a, m.c, m.src, m.b);
      break;
    case kContribute: {
      Shape shape = decode(m.c);
      size_t bytes = shape.valid ? shape.n * 8 : 0;
      if (p.size != 8 + bytes || (shape.valid && shape.n > kMaxElements))
        fatal("thread reduction at %p: malformed contribution from rank %d (%zu bytes for %s)", (void *)m.a, m.src,
              p.size, describe(shape).c_str());
      Contribution c{m.src, m.b, 0, shape, std::vector<std::byte>(p.data + 8, p.data + p.size)};
      std::memcpy(&c.thread_id, p.data, 8);
      contribute(m.a, std::move(c));
      break;
    }
    case kReply:
      replied_here(m.b, (int)(int64_t)m.c, p);
      break;
    default:
      fatal("thread reduction: unknown operation %u from rank %d", (unsigned)m.op, m.src);
  }
}

void ThreadReduceService::manage(Op op, uint64_t object, uint64_t arg, Rank from, uint64_t token) {
  Reduction &r = reductions_[object];
  int status = AGORA_OK;
  if (!r.round.empty()) {
    // Re-initialising or destroying under a team's feet would strand it.
    status = op == kInit ? AGORA_ERR_INVALID_ARGUMENT : AGORA_BUSY;
    log_error("%s(%p): %zu of %u threads are in a reduction round on it",
              op == kInit ? "agora_thread_reduction_init" : "agora_thread_reduction_destroy", (void *)object,
              r.round.size(), r.count);
  } else if (op == kInit) {
    r.count = (uint32_t)arg;
  } else {
    reductions_.erase(object);
  }
  reply(from, token, status);
}

void ThreadReduceService::contribute(uint64_t object, Contribution c) {
  auto it = reductions_.find(object);
  if (it == reductions_.end() || it->second.count == 0) {
    log_error(
        "agora_thread_reduce(%p): not initialised (call agora_thread_reduction_init first, "
        "once, with the team size)",
        (void *)object);
    reply(c.rank, c.token, AGORA_ERR_INVALID_ARGUMENT);
    return;
  }
  Reduction &r = it->second;
  r.round.push_back(std::move(c));
  if (r.round.size() < r.count) return;
  std::vector<Contribution> round = std::move(r.round);
  r.round.clear();  // the next round may start at once
  complete_round(object, std::move(round));
}

int ThreadReduceService::check_round(uint64_t object, const std::vector<Contribution> &round) const {
  for (const Contribution &c : round) {
    if (c.shape.valid) continue;
    log_error(
        "agora_thread_reduce(reduction at %p): the thread 0x%llx on rank %d passed bad arguments "
        "(%s; at most %zu elements of int64 or double, op sum, min or max); every participant of "
        "this round gets AGORA_ERR_INVALID_ARGUMENT",
        (void *)object, (unsigned long long)c.thread_id, c.rank, describe(c.shape).c_str(), kMaxElements);
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  const Contribution &first = round.front();
  for (const Contribution &c : round) {
    if (c.shape == first.shape) continue;
    log_error(
        "agora_thread_reduce(reduction at %p): threads of one round passed different arguments "
        "(thread 0x%llx on rank %d: %s; thread 0x%llx on rank %d: %s); every participant must pass "
        "the same count, type and op; each of the %zu gets AGORA_ERR_MISUSE",
        (void *)object, (unsigned long long)first.thread_id, first.rank, describe(first.shape).c_str(),
        (unsigned long long)c.thread_id, c.rank, describe(c.shape).c_str(), round.size());
    return AGORA_ERR_MISUSE;
  }
  return AGORA_OK;
}

void ThreadReduceService::complete_round(uint64_t object, std::vector<Contribution> round) {
  int status = check_round(object, round);
  std::vector<std::byte> acc;
  if (status == AGORA_OK) {
    // The participants' id order fixes the result, whatever the arrival order.
    std::vector<const Contribution *> order;
    order.reserve(round.size());
    for (const Contribution &c : round) order.push_back(&c);
    if (!arrival_order_)
      std::stable_sort(order.begin(), order.end(),
                       [](const Contribution *x, const Contribution *y) { return x->thread_id < y->thread_id; });
    const Shape &s = round.front().shape;
    acc = order.front()->data;
    for (size_t i = 1; i < order.size(); ++i) combine(acc.data(), order[i]->data.data(), s.n, s.type, s.op);
  }
  for (const Contribution &c : round) reply(c.rank, c.token, status, {acc.data(), acc.size()});
}

void ThreadReduceService::reply(Rank to, uint64_t token, int status, Payload result) {
  if (to == host_.rank())
    replied_here(token, status, result);
  else
    host_.send(to, {Channel::ThreadReduce, kReply, 0, 0, token, (uint64_t)(int64_t)status}, result);
}

void ThreadReduceService::replied_here(uint64_t token, int status, Payload result) {
  auto it = pending_.find(token);
  if (it != pending_.end()) {
    if (status == AGORA_OK) {
      if (result.size != it->second.bytes)
        fatal("thread reduction: a result of %zu bytes for a contribution of %zu", result.size, it->second.bytes);
      if (result.size) std::memcpy(it->second.data, result.data, result.size);
    }
    pending_.erase(it);
  }
  reinterpret_cast<Waiter *>(token)->complete(status);
}

std::string ThreadReduceService::describe_contention() const {
  std::string out;
  for (const auto &[object, r] : reductions_) {
    if (r.round.empty()) continue;
    char line[200];
    std::snprintf(line, sizeof line, "thread reduction at %p (managed here): %zu of %u threads contributed (%s)\n",
                  (void *)object, r.round.size(), r.count, describe(r.round.front().shape).c_str());
    out += line;
  }
  return out;
}

}  // namespace agora
