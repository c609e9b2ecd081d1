#include "sync/lock_service.h"

#include <cinttypes>

#include "common/log.h"
#include "common/stats.h"
#include "common/status.h"

namespace agora {

int LockService::acquire(uint64_t lock, uint64_t thread, Waiter *w, bool try_only) {
  if (holds(lock, thread)) return try_only ? AGORA_BUSY : AGORA_ERR_DEADLOCK;
  uint64_t signature = signatures_ ? signatures_(lock) : 0;
  uint64_t token = (uint64_t)(uintptr_t)w;
  pending_thread_[token] = thread;
  auto request = [this, lock, token, signature, try_only] {
    Requester r{host_.rank(), token, {}};
    if (carries_consistency()) engine_->acquirer_view(&r.view);
    Rank mgr = manager_of(lock);
    if (mgr == host_.rank()) {
      manager_request(lock, std::move(r), signature, try_only);
    } else {
      host_.send_request(mgr, {Channel::Lock, try_only ? kTryRequest : kRequest, 0, lock, token, signature},
                         {r.view.data(), r.view.size()});
    }
  };
  if (!engine_) {
    request();
  } else if (try_only) {
    engine_->span_begin(lock, std::move(request));  // a busy answer must not wait for a span start
  } else {
    // The request travels while the protocol prepares the span (regc's
    // rule-1 broadcast): the span starts when both are done.
    starting_[token] = {};
    engine_->span_begin(lock, [this, token] { span_ready(token); });
    request();
  }
  return AGORA_OK;
}

void LockService::span_ready(uint64_t token) {
  auto it = starting_.find(token);
  AGORA_ASSERT(it != starting_.end());  // one readiness per acquire
  if (!it->second.granted) {
    it->second.ready = true;
    return;
  }
  Starting started = std::move(it->second);
  starting_.erase(it);
  if (carries_consistency()) engine_->lock_acquire(started.lock, {started.info.data(), started.info.size()});
  reinterpret_cast<Waiter *>(token)->complete(AGORA_OK);
}

int LockService::release(uint64_t lock, uint64_t thread, const std::vector<StoreRange> *stores) {
  auto it = holder_thread_.find(lock);
  if (it == holder_thread_.end() || it->second != thread) return AGORA_ERR_NOT_HELD;
  holder_thread_.erase(it);
  if (engine_) engine_->span_end(lock, stores);
  Rank mgr = manager_of(lock);
  if (mgr == host_.rank()) {
    manager_release(lock, host_.rank());
  } else {
    host_.send_request(mgr, {Channel::Lock, kRelease, 0, lock, 0, 0});
  }
  return AGORA_OK;
}

int LockService::destroy(uint64_t lock, Waiter *w) {
  if (holder_thread_.count(lock)) return AGORA_ERR_MISUSE;
  uint64_t token = (uint64_t)(uintptr_t)w;
  Rank mgr = manager_of(lock);
  if (mgr == host_.rank())
    manager_destroy(lock, host_.rank(), token, false);
  else
    host_.send_request(mgr, {Channel::Lock, kDestroy, 0, lock, token, 0});
  return AGORA_OK;
}

void LockService::manager_destroy(uint64_t lock, Rank from, uint64_t token, bool asked_holder) {
  int status = AGORA_OK;
  auto it = managed_.find(lock);
  if (it != managed_.end()) {
    const Managed &l = it->second;
    if (l.held && l.queue.empty() && !asked_holder && l.holder != host_.rank()) {
      // Held by another rank, as far as this record knows: ask it.
      host_.send_request(l.holder, {Channel::Lock, kHolderQuery, 0, lock, token, (uint64_t)from});
      return;
    }
    if (l.held || !l.queue.empty())
      status = AGORA_ERR_MISUSE;
    else
      managed_.erase(it);
  }
  if (from == host_.rank())
    reinterpret_cast<Waiter *>(token)->complete(status);
  else
    host_.send(from, {Channel::Lock, kDestroyed, 0, lock, token, (uint64_t)(int64_t)status});
}

void LockService::on_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kRequest:
    case kTryRequest:
      manager_request(m.a, {m.src, m.b, std::vector<std::byte>(p.data, p.data + p.size)}, m.c, m.op == kTryRequest);
      break;
    case kBusy:
      busy_here(m.b);
      break;
    case kRelease:
      manager_release(m.a, m.src);
      break;
    case kGrant:
      granted_here(m.a, m.b, p);
      break;
    case kHandOff:
      hand_off(m.a, {(Rank)m.c, m.b, std::vector<std::byte>(p.data, p.data + p.size)});
      break;
    case kDestroy:
      manager_destroy(m.a, m.src, m.b, false);
      break;
    case kHolderQuery:
      host_.send(m.src, {Channel::Lock, kHolderAnswer, 0, m.a, m.b, m.c});
      break;
    case kHolderAnswer:
      manager_destroy(m.a, (Rank)m.c, m.b, true);
      break;
    case kDestroyed:
      reinterpret_cast<Waiter *>(m.b)->complete((int)(int64_t)m.c);
      break;
  }
}

void LockService::check_signature(uint64_t lock, Managed &l, Rank from, uint64_t signature) {
  if (l.signer < 0) {
    uint64_t own = signatures_ ? signatures_(lock) : 0;
    if (own) {
      l.signature = own;
      l.signer = host_.rank();
    }
  }
  if (!signature) return;
  if (l.signer < 0) {
    l.signature = signature;
    l.signer = from;
  } else if (l.signature != signature) {
    fatal("lock %" PRIu64
          " is not the same lock on rank %d and rank %d: they created their locks "
          "differently (a different number of agora_lock_create / agora_lock_array_create calls or "
          "sizes before it). Creating locks is collective: every rank must create the same locks in "
          "the same order",
          lock, l.signer, from);
  }
}

void LockService::manager_request(uint64_t lock, Requester r, uint64_t signature, bool try_only) {
  Managed &l = managed_[lock];
  check_signature(lock, l, r.rank, signature);
  if (l.held && try_only) {
    if (r.rank == host_.rank())
      busy_here(r.token);
    else
      host_.send(r.rank, {Channel::Lock, kBusy, 0, lock, r.token, 0});
    return;
  }
  if (l.held) {
    l.queue.push_back(std::move(r));
    return;
  }
  AGORA_ASSERT(l.queue.empty());  // a free lock has nobody waiting
  l.held = true;
  l.holder = r.rank;
  grant(lock, l, std::move(r));
}

void LockService::manager_release(uint64_t lock, Rank releaser) {
  Managed &l = managed_[lock];
  AGORA_ASSERT(l.held && l.holder == releaser);  // only the holder's rank releases
  l.last_releaser = releaser;
  if (l.queue.empty()) {
    l.held = false;
    return;
  }
  Requester next = std::move(l.queue.front());
  l.queue.pop_front();
  l.holder = next.rank;
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
  engine_->lock_release(lock, [this, lock, to] {
    std::vector<std::byte> info;
    engine_->lock_release_info(lock, {to->view.data(), to->view.size()}, &info);
    host_.send(to->rank, {Channel::Lock, kGrant, 0, lock, to->token, 0}, {info.data(), info.size()});
  });
}

std::string LockService::describe_contention() const {
  std::string out;
  for (const auto &[lock, l] : managed_) {
    if (!l.held || l.queue.empty()) continue;
    out +=
        "lock " + std::to_string(lock) + " (managed here) is held by rank " + std::to_string(l.holder) + "; waiting:";
    for (const auto &r : l.queue) out += " rank " + std::to_string(r.rank);
    out += "\n";
  }
  return out;
}

void LockService::busy_here(uint64_t token) {
  pending_thread_.erase(token);
  reinterpret_cast<Waiter *>(token)->complete(AGORA_BUSY);
}

void LockService::granted_here(uint64_t lock, uint64_t token, Payload info) {
  auto it = pending_thread_.find(token);
  AGORA_ASSERT(it != pending_thread_.end());  // a grant answers a request of this rank
  AGORA_ASSERT(!holder_thread_.count(lock));  // held by one thread of the rank at a time
  holder_thread_[lock] = it->second;
  pending_thread_.erase(it);
  host_.stats().lock_acquires++;
  auto starting = starting_.find(token);
  if (starting != starting_.end()) {
    if (!starting->second.ready) {
      // span_ready starts the span: the protocol takes the lock's log then,
      // so that what came meanwhile is settled with it.
      starting->second.granted = true;
      starting->second.lock = lock;
      starting->second.info.assign(info.data, info.data + info.size);
      return;
    }
    starting_.erase(starting);
  }
  if (carries_consistency()) engine_->lock_acquire(lock, info);
  reinterpret_cast<Waiter *>(token)->complete(AGORA_OK);
}

}  // namespace agora
