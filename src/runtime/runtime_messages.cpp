// Messages: the EngineHost's sends (a request also rings the destination's
// doorbell), and the receive side: polling the transport under the lock and
// dispatching each message to the component of its channel.
#include "common/log.h"
#include "observe/observe.h"
#include "runtime/runtime.h"

namespace agora {

void Runtime::send(Rank dst, MsgHeader header, Payload payload) {
  header.src = rank();
  ObservedMessage observed(true, dst, header, payload);
  stats_.messages_sent++;  // the hang watch's count too (watch messages go by send_control)
  stats_.bytes_sent += transport_.send(dst, header, payload);
  // AGORA_WAIT=block: dst's waiting threads sleep rather than poll, so every
  // message, replies and messages to this rank included, wakes its service.
  // A memory server sleeps until rung: every message to one rings it.
  if ((block_waits_ || servers_.is_server_rank(dst)) && doorbells_.ringable(dst)) doorbells_.ring(dst);
}

void Runtime::send_request(Rank dst, MsgHeader header, Payload payload) {
  send(dst, header, payload);
  if (block_waits_ || servers_.is_server_rank(dst)) return;  // send() rang already
  doorbells_.ring_to_act(dst, config_.service);              // at most one ring per kRingInterval_s
}

void Runtime::send_control(Rank dst, MsgHeader header, Payload payload) {
  header.src = rank();
  ObservedMessage observed(true, dst, header, payload);
  transport_.send(dst, header, payload);
  // A memory server sleeps until rung (the hang watch's probes too).
  if (servers_.is_server_rank(dst) && doorbells_.ringable(dst)) doorbells_.ring(dst);
}

int Runtime::poll_locked(int budget) {
  // One-sided reads completed first: the engine never hears of one from
  // inside read_remote.
  int delivered = one_sided_.deliver(budget);
  if (delivered == budget) return delivered;
  return delivered + transport_.poll([this](const MsgHeader &m, Payload p) { dispatch(m, p); }, budget - delivered);
}

void Runtime::dispatch(const MsgHeader &m, Payload p) {
  ObservedMessage observed(false, m.src, m, p);
  if (m.channel != Channel::Watch) messages_in_++;
  switch (m.channel) {
    case Channel::Protocol:
      engine_->on_message(m, p);
      cache_.trim();  // a copy may have come in: keep within AGORA_CACHE
      break;
    case Channel::Lock:
      locks_->on_message(m, p);
      break;
    case Channel::Barrier:
      barrier_->on_message(m, p);
      break;
    case Channel::Reduce:
      reduce_->on_message(m, p);
      break;
    case Channel::Memory:
      memory_->on_message(m, p);
      break;
    case Channel::Thread:
      threads_->on_message(m, p);
      break;
    case Channel::Watch:
      watch_->on_message(m, p);
      break;
    case Channel::ThreadBarrier:
      thread_barriers_->on_message(m, p);
      break;
    case Channel::ThreadReduce:
      thread_reductions_->on_message(m, p);
      break;
    case Channel::Semaphore:
      semaphores_->on_message(m, p);
      break;
    case Channel::Condition:
      conditions_->on_message(m, p);
      break;
    case Channel::Server:
      servers_.on_message(m, p);
      break;
    case Channel::RankCall:
      rank_call_message(m, p);
      break;
    case Channel::Gptr: {
      gptr_.on_message(m, p);
      break;
    }
    default:
      fatal("message with unknown channel %u from rank %d", (unsigned)m.channel, m.src);
  }
}

}  // namespace agora
