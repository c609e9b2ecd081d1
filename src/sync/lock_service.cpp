#include "sync/lock_service.h"

#include "common/stats.h"

namespace agora {

void LockService::acquire(uint64_t lock, uint64_t thread, Waiter *w) {
  uint64_t token = (uint64_t)(uintptr_t)w;
  pending_thread_[token] = thread;
  Rank mgr = manager_of(lock);
  if (mgr == host_.rank()) {
    manager_request(lock, {mgr, token});
  } else {
    host_.send_request(mgr, {Channel::Lock, kRequest, 0, lock, token, 0});
  }
}

int LockService::release(uint64_t lock, uint64_t thread) {
  auto it = holder_thread_.find(lock);
  if (it == holder_thread_.end() || it->second != thread) return -4;
  holder_thread_.erase(it);
  Rank mgr = manager_of(lock);
  if (mgr == host_.rank()) {
    manager_release(lock);
  } else {
    host_.send_request(mgr, {Channel::Lock, kRelease, 0, lock, 0, 0});
  }
  return 0;
}

void LockService::on_message(const MsgHeader &m) {
  switch (m.op) {
    case kRequest: manager_request(m.a, {m.src, m.b}); break;
    case kRelease: manager_release(m.a); break;
    case kGrant: granted_here(m.a, m.b); break;
  }
}

void LockService::manager_request(uint64_t lock, Requester r) {
  Managed &l = managed_[lock];
  if (l.held) {
    l.queue.push_back(r);
    return;
  }
  l.held = true;
  grant(lock, r);
}

void LockService::manager_release(uint64_t lock) {
  Managed &l = managed_[lock];
  if (l.queue.empty()) {
    l.held = false;
    return;
  }
  Requester next = l.queue.front();
  l.queue.pop_front();
  grant(lock, next);
}

void LockService::grant(uint64_t lock, Requester r) {
  if (r.rank == host_.rank()) {
    granted_here(lock, r.token);
  } else {
    host_.send(r.rank, {Channel::Lock, kGrant, 0, lock, r.token, 0});
  }
}

void LockService::granted_here(uint64_t lock, uint64_t token) {
  auto it = pending_thread_.find(token);
  holder_thread_[lock] = it->second;
  pending_thread_.erase(it);
  host_.stats().lock_acquires++;
  reinterpret_cast<Waiter *>(token)->complete(0);
}

}  // namespace agora
