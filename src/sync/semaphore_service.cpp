#include "sync/semaphore_service.h"

#include "common/log.h"
#include "common/status.h"

namespace agora {

void SemaphoreService::init(uint64_t object, uint64_t value, Waiter *w) {
  request(object, kInit, value, (uint64_t)(uintptr_t)w);
}

void SemaphoreService::wait(uint64_t object, bool try_only, Waiter *w) {
  uint64_t token = (uint64_t)(uintptr_t)w;
  acquiring_[token] = true;
  request(object, try_only ? kTryWait : kWait, 0, token);
}

void SemaphoreService::post(uint64_t object, Waiter *w) {
  uint64_t token = (uint64_t)(uintptr_t)w;
  if (!carries_consistency()) {
    request(object, kPost, 0, token);
    return;
  }
  engine_->release([this, object, token] {
    std::vector<std::byte> info;
    engine_->release_info({}, &info);
    request(object, kPost, 0, token, {info.data(), info.size()});
  });
}

void SemaphoreService::get_value(uint64_t object, int64_t *value, Waiter *w) {
  uint64_t token = (uint64_t)(uintptr_t)w;
  value_out_[token] = value;
  request(object, kGetValue, 0, token);
}

void SemaphoreService::destroy(uint64_t object, Waiter *w) { request(object, kDestroy, 0, (uint64_t)(uintptr_t)w); }

void SemaphoreService::request(uint64_t object, Op op, uint64_t arg, uint64_t token, Payload info) {
  Rank mgr = manager_of(object);
  if (mgr == host_.rank())
    manage(op, object, arg, {host_.rank(), token}, info);
  else
    host_.send_request(mgr, {Channel::Semaphore, op, 0, object, token, arg}, info);
}

void SemaphoreService::on_message(const MsgHeader &m, Payload p) {
  if (m.op == kReply) {
    replied_here(m.b, (int64_t)m.a, m.c, p);
    return;
  }
  manage((Op)m.op, m.a, m.c, {m.src, m.b}, p);
}

void SemaphoreService::manage(Op op, uint64_t object, uint64_t arg, Requester r, Payload info) {
  Sem &s = sems_[object];
  switch (op) {
    case kInit:
      if (!s.waiting.empty()) {
        reply(r, AGORA_ERR_INVALID_ARGUMENT, 0);
        return;
      }
      s.value = arg;
      s.infos.clear();
      reply(r, AGORA_OK, 0);
      return;
    case kWait:
    case kTryWait:
      if (s.value > 0) {
        s.value--;
        grant(s, r);
      } else if (op == kTryWait) {
        reply(r, AGORA_BUSY, 0);
      } else {
        s.waiting.push_back(r);
      }
      return;
    case kPost:
      if (s.waiting.empty() && s.value >= kMaxValue) {
        reply(r, AGORA_ERR_INVALID_ARGUMENT, 0);
        return;
      }
      s.infos.keep(r.rank, info);
      reply(r, AGORA_OK, 0);
      if (s.waiting.empty()) {
        s.value++;
      } else {
        Requester next = s.waiting.front();
        s.waiting.pop_front();
        grant(s, next);
      }
      return;
    case kGetValue:
      reply(r, AGORA_OK, s.value);
      return;
    case kDestroy:
      if (!s.waiting.empty()) {
        reply(r, AGORA_BUSY, 0);
        return;
      }
      sems_.erase(object);
      reply(r, AGORA_OK, 0);
      return;
    case kReply:
      return;
  }
}

void SemaphoreService::grant(Sem &s, Requester r) {
  std::vector<std::byte> infos;
  s.infos.encode_for(r.rank, &infos);
  reply(r, AGORA_OK, 0, {infos.data(), infos.size()});
}

void SemaphoreService::reply(Requester r, int64_t status, uint64_t result, Payload infos) {
  if (r.rank == host_.rank())
    replied_here(r.token, status, result, infos);
  else
    host_.send(r.rank, {Channel::Semaphore, kReply, 0, (uint64_t)status, r.token, result}, infos);
}

void SemaphoreService::replied_here(uint64_t token, int64_t status, uint64_t result, Payload infos) {
  if (acquiring_.erase(token) && status == AGORA_OK && carries_consistency() && !ReleaseBundles::apply(*engine_, infos))
    fatal("semaphore: malformed release information");
  auto out = value_out_.find(token);
  if (out != value_out_.end()) {
    *out->second = (int64_t)result;
    value_out_.erase(out);
  }
  reinterpret_cast<Waiter *>(token)->complete((int)status);
}

std::string SemaphoreService::describe_contention() const {
  std::string out;
  for (const auto &[object, s] : sems_) {
    if (s.waiting.empty()) continue;
    char line[160];
    std::snprintf(line, sizeof line, "semaphore at %p (managed here): count 0, %zu threads wait\n", (void *)object,
                  s.waiting.size());
    out += line;
  }
  return out;
}

}  // namespace agora
