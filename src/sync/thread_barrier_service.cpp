#include "sync/thread_barrier_service.h"

#include "common/log.h"
#include "common/stats.h"
#include "common/status.h"

namespace agora {

void ThreadBarrierService::wait(uint64_t object, uint32_t count, Waiter *w) {
  host_.stats().barriers++;
  uint64_t token = (uint64_t)(uintptr_t)w;
  if (!carries_consistency()) {
    send_arrival(object, count, token);
    return;
  }
  engine_->release([this, object, count, token] { send_arrival(object, count, token); });
}

void ThreadBarrierService::send_arrival(uint64_t object, uint32_t count, uint64_t token) {
  std::vector<std::byte> info;
  if (carries_consistency()) engine_->release_info({}, &info);
  Rank mgr = manager_of(object);
  if (mgr == host_.rank()) {
    manager_arrive(object, count, {host_.rank(), token}, {info.data(), info.size()});
  } else {
    host_.send_request(mgr, {Channel::ThreadBarrier, kArrive, 0, object, token, count}, {info.data(), info.size()});
  }
}

void ThreadBarrierService::on_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kArrive:
      manager_arrive(m.a, (uint32_t)m.c, {m.src, m.b}, p);
      break;
    case kDepart:
      departed_here(m.b, (int)m.c, p);
      break;
  }
}

void ThreadBarrierService::manager_arrive(uint64_t object, uint32_t count, Arrival a, Payload info) {
  Round &r = rounds_[object];
  if (r.arrived.empty()) {
    r.count = count;
    r.first_rank = a.rank;
  } else if (r.count != count) {
    fatal(
        "thread barrier at %p: waiters of one round passed different counts (%u from a thread "
        "on rank %d, %u from a thread on rank %d); every waiter of a round must pass the same "
        "count",
        (void *)object, r.count, r.first_rank, count, a.rank);
  }
  r.arrived.push_back(a);
  r.infos.keep(a.rank, info);
  if (r.arrived.size() < r.count) return;
  Round done = std::move(r);
  rounds_.erase(object);
  for (size_t i = 0; i < done.arrived.size(); ++i) {
    const Arrival &to = done.arrived[i];
    int status = i + 1 == done.arrived.size() ? AGORA_BARRIER_SERIAL : AGORA_OK;  // the last arriver
    std::vector<std::byte> infos;
    done.infos.encode_for(to.rank, &infos);
    if (to.rank == host_.rank())
      departed_here(to.token, status, {infos.data(), infos.size()});
    else
      host_.send(to.rank, {Channel::ThreadBarrier, kDepart, 0, object, to.token, (uint64_t)status},
                 {infos.data(), infos.size()});
  }
}

void ThreadBarrierService::departed_here(uint64_t token, int status, Payload infos) {
  if (carries_consistency() && !ReleaseBundles::apply(*engine_, infos))
    fatal("thread barrier: malformed release information");
  reinterpret_cast<Waiter *>(token)->complete(status);
}

std::string ThreadBarrierService::describe_contention() const {
  std::string out;
  for (const auto &[object, r] : rounds_) {
    char line[160];
    std::snprintf(line, sizeof line, "thread barrier at %p (managed here): %zu of %u threads arrived\n", (void *)object,
                  r.arrived.size(), r.count);
    out += line;
  }
  return out;
}

}  // namespace agora
