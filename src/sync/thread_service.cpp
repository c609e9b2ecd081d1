#include "sync/thread_service.h"

#include "common/status.h"

namespace agora {

void ThreadService::create(Rank target, Payload fn, uint64_t arg, ThreadCreateOp *op) {
  created_++;
  if (target == host_.rank()) {
    int status = start_here(fn, arg, &op->id);
    op->w.complete(status);
    return;
  }
  // The creator's writes so far must reach the new thread: publish them,
  // then send the create with what the target must apply.
  std::vector<std::byte> payload(fn.data, fn.data + fn.size);
  uint64_t token = (uint64_t)(uintptr_t)op, fn_size = fn.size;
  auto send = [this, target, arg, token, fn_size, payload]() mutable {
    std::vector<std::byte> info;  // stays empty under a protocol without sync hooks (sc)
    engine_.release_info({}, &info);
    payload.insert(payload.end(), info.begin(), info.end());
    host_.send_request(target, {Channel::Thread, kCreate, 0, arg, token, fn_size}, {payload.data(), payload.size()});
  };
  engine_.release(send);  // sc: sends at once
}

int ThreadService::start_here(Payload fn, uint64_t arg, uint64_t *id) {
  *id = ++last_id_;
  threads_[*id];  // before the thread runs: it may exit at once
  running_++;
  int status = start_(*id, fn, arg);
  if (status != AGORA_OK) {
    threads_.erase(*id);
    running_--;
    exited_++;  // a create that failed ends here, for the quiescence count
    *id = 0;
  }
  return status;
}

void ThreadService::join(Rank rank, uint64_t id, ThreadJoinOp *op) {
  Joiner j{host_.rank(), (uint64_t)(uintptr_t)op};
  if (rank == host_.rank())
    join_here(id, j);
  else
    host_.send_request(rank, {Channel::Thread, kJoin, 0, id, j.token, 0});
}

void ThreadService::join_here(uint64_t id, Joiner j) {
  auto it = threads_.find(id);
  if (it == threads_.end()) {
    reply_join(j, id == 0 || id > last_id_ ? JoinError::Unknown : JoinError::AlreadyJoined, 0, {});
    return;
  }
  if (it->second.joiner.rank >= 0) {
    reply_join(j, JoinError::BeingJoined, 0, {});
    return;
  }
  it->second.joiner = j;
  if (it->second.finished) finish(id);
}

void ThreadService::exited(uint64_t id, uint64_t ret) {
  running_--;
  exited_++;
  threads_.at(id).ret = ret;
  // The thread's writes must reach a joiner on another rank: publish them
  // and keep what the joiner must apply.
  auto done = [this, id] {
    Thread &t = threads_.at(id);
    engine_.release_info({}, &t.release_info);
    t.finished = true;
    if (t.joiner.rank >= 0) finish(id);
  };
  engine_.release(done);
}

void ThreadService::finish(uint64_t id) {
  auto it = threads_.find(id);
  const Thread &t = it->second;
  reply_join(t.joiner, JoinError::None, t.ret, {t.release_info.data(), t.release_info.size()});
  threads_.erase(it);
}

void ThreadService::reply_join(Joiner j, JoinError error, uint64_t ret, Payload info) {
  if (j.rank == host_.rank()) {
    joined(j.token, error, ret, {}, false);
  } else {
    // The joiner may have stopped polling (a long join): wake its service.
    host_.send_request(j.rank, {Channel::Thread, kJoined, 0, ret, j.token, (uint64_t)error}, info);
  }
}

void ThreadService::joined(uint64_t token, JoinError error, uint64_t ret, Payload info, bool remote) {
  if (remote && error == JoinError::None) engine_.acquire(info);
  auto *op = reinterpret_cast<ThreadJoinOp *>(token);
  op->ret = ret;
  op->error = error;
  op->w.complete(error == JoinError::None ? AGORA_OK : AGORA_ERR_INVALID_ARGUMENT);
}

void ThreadService::request_exit(int status, bool quick) {
  if (host_.rank() == 0) {
    if (on_exit_) on_exit_(status, quick);
    return;
  }
  // The exiting thread's writes must reach the exit handlers on rank 0.
  auto send = [this, status, quick] {
    std::vector<std::byte> info;
    engine_.release_info({}, &info);
    host_.send_request(0, {Channel::Thread, kExit, 0, (uint64_t)(int64_t)status, quick ? 1u : 0u, 0},
                       {info.data(), info.size()});
  };
  engine_.release(send);
}

void ThreadService::on_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kCreate: {
      // The new thread acquires what its creator released, before it runs.
      engine_.acquire({p.data + m.c, p.size - m.c});
      uint64_t id = 0;
      int status = start_here({p.data, m.c}, m.a, &id);
      host_.send(m.src, {Channel::Thread, kCreated, 0, id, m.b, (uint64_t)(int64_t)status});
      break;
    }
    case kCreated: {
      auto *op = reinterpret_cast<ThreadCreateOp *>(m.b);
      op->id = m.a;
      op->w.complete((int)(int64_t)m.c);
      break;
    }
    case kJoin:
      join_here(m.a, {m.src, m.b});
      break;
    case kJoined:
      joined(m.b, (JoinError)m.c, m.a, p, true);
      break;
    case kExit:
      engine_.acquire(p);
      if (on_exit_) on_exit_((int)(int64_t)m.a, m.b != 0);
      break;
  }
}

}  // namespace agora
