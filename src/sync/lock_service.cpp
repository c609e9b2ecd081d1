#include "sync/lock_service.h"

#include "common/stats.h"

namespace agora {

void LockService::acquire(uint64_t lock, uint64_t thread, Waiter *w) {
  uint64_t token = (uint64_t)(uintptr_t)w;
  pending_thread_[token] = thread;
  Requester r{host_.rank(), token, {}};
  if (carries_consistency()) engine_->acquirer_view(&r.view);
  Rank mgr = manager_of(lock);
  if (mgr == host_.rank()) {
    manager_request(lock, std::move(r));
  } else {
    host_.send_request(mgr, {Channel::Lock, kRequest, 0, lock, token, 0}, {r.view.data(), r.view.size()});
  }
}

int LockService::release(uint64_t lock, uint64_t thread) {
  auto it = holder_thread_.find(lock);
  if (it == holder_thread_.end() || it->second != thread) return -4;
  holder_thread_.erase(it);
  Rank mgr = manager_of(lock);
  if (mgr == host_.rank()) {
    manager_release(lock, host_.rank());
  } else {
    host_.send_request(mgr, {Channel::Lock, kRelease, 0, lock, 0, 0});
  }
  return 0;
}

void LockService::on_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kRequest:
      manager_request(m.a, {m.src, m.b, std::vector<std::byte>(p.data, p.data + p.size)});
      break;
    case kRelease: manager_release(m.a, m.src); break;
    case kGrant: granted_here(m.a, m.b, p); break;
    case kHandOff:
      hand_off(m.a, {(Rank)m.c, m.b, std::vector<std::byte>(p.data, p.data + p.size)});
      break;
  }
}

void LockService::manager_request(uint64_t lock, Requester r) {
  Managed &l = managed_[lock];
  if (l.held) {
    l.queue.push_back(std::move(r));
    return;
  }
  l.held = true;
  grant(lock, l, std::move(r));
}

void LockService::manager_release(uint64_t lock, Rank releaser) {
  Managed &l = managed_[lock];
  l.last_releaser = releaser;
  if (l.queue.empty()) {
    l.held = false;
    return;
  }
  Requester next = std::move(l.queue.front());
  l.queue.pop_front();
  grant(lock, l, std::move(next));
}

void LockService::grant(uint64_t lock, const Managed &l, Requester r) {
  if (carries_consistency() && l.last_releaser >= 0 && l.last_releaser != r.rank) {
    // The writes to hand over are at the last releaser: it grants.
    if (l.last_releaser == host_.rank()) {
      hand_off(lock, std::move(r));
    } else {
      host_.send_request(l.last_releaser, {Channel::Lock, kHandOff, 0, lock, r.token, (uint64_t)r.rank},
                         {r.view.data(), r.view.size()});
    }
    return;
  }
  if (r.rank == host_.rank()) {
    granted_here(lock, r.token, {});
  } else {
    host_.send(r.rank, {Channel::Lock, kGrant, 0, lock, r.token, 0});
  }
}

void LockService::hand_off(uint64_t lock, Requester r) {
  // Publish this rank's writes, then grant with what the acquirer lacks.
  auto to = std::make_shared<Requester>(std::move(r));
  engine_->release([this, lock, to] {
    std::vector<std::byte> info;
    engine_->release_info({to->view.data(), to->view.size()}, &info);
    host_.send(to->rank, {Channel::Lock, kGrant, 0, lock, to->token, 0}, {info.data(), info.size()});
  });
}

void LockService::granted_here(uint64_t lock, uint64_t token, Payload info) {
  auto it = pending_thread_.find(token);
  holder_thread_[lock] = it->second;
  pending_thread_.erase(it);
  host_.stats().lock_acquires++;
  if (carries_consistency()) engine_->acquire(info);
  reinterpret_cast<Waiter *>(token)->complete(0);
}

}  // namespace agora
