#include "sync/condition_service.h"

#include <algorithm>
#include <cstdio>

#include "common/status.h"

namespace agora {

void ConditionService::to(Rank rank, Op op, uint64_t object, uint64_t b, uint64_t c) {
  if (rank == host_.rank())
    manage(op, object, b, c, rank);
  else if (op == kEnqueue || op == kCancel || op == kSignal)
    host_.send_request(rank, {Channel::Condition, op, 0, object, b, c});
  else
    host_.send(rank, {Channel::Condition, op, 0, object, b, c});
}

void ConditionService::enqueue(uint64_t object, Waiter *woken, Waiter *queued) {
  to(manager_of(object), kEnqueue, object, (uint64_t)(uintptr_t)woken, (uint64_t)(uintptr_t)queued);
}

void ConditionService::cancel(uint64_t object, Waiter *woken) {
  to(manager_of(object), kCancel, object, (uint64_t)(uintptr_t)woken, 0);
}

void ConditionService::signal(uint64_t object, bool all) { to(manager_of(object), kSignal, object, 0, all); }

void ConditionService::on_message(const MsgHeader &m, Payload) { manage((Op)m.op, m.a, m.b, m.c, m.src); }

void ConditionService::manage(Op op, uint64_t object, uint64_t b, uint64_t c, Rank from) {
  switch (op) {
    case kEnqueue:
      waiting_[object].push_back({from, b});
      to(from, kQueued, object, c, 0);
      return;
    case kCancel: {
      auto it = waiting_.find(object);
      if (it == waiting_.end()) return;
      auto &q = it->second;
      auto s = std::find_if(q.begin(), q.end(), [&](const Sleeper &x) { return x.rank == from && x.token == b; });
      if (s == q.end()) return;  // already woken: that wake is on its way
      Sleeper gone = *s;
      q.erase(s);
      if (q.empty()) waiting_.erase(it);
      wake(gone, AGORA_TIMEDOUT);
      return;
    }
    case kSignal: {
      auto it = waiting_.find(object);
      if (it == waiting_.end()) return;
      std::deque<Sleeper> woken;
      if (c) {
        woken.swap(it->second);
      } else {
        woken.push_back(it->second.front());
        it->second.pop_front();
      }
      if (it->second.empty()) waiting_.erase(it);
      for (const Sleeper &s : woken) wake(s, AGORA_OK);
      return;
    }
    case kQueued:
      reinterpret_cast<Waiter *>(b)->complete(AGORA_OK);
      return;
    case kWake:
      reinterpret_cast<Waiter *>(b)->complete((int)c);
      return;
  }
}

void ConditionService::wake(Sleeper s, int status) { to(s.rank, kWake, 0, s.token, (uint64_t)status); }

std::string ConditionService::describe_contention() const {
  std::string out;
  for (const auto &[object, q] : waiting_) {
    char line[160];
    std::snprintf(line, sizeof line, "condition variable at %p (managed here): %zu threads wait\n", (void *)object,
                  q.size());
    out += line;
  }
  return out;
}

}  // namespace agora
