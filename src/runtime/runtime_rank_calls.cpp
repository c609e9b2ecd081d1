// Calls run on another rank (rank_calls/rank_calls.h): the requester sends
// the request and waits for the reply; the target's dispatch hands it to
// its workers, which run it without the lock and reply.
#include <cstring>

#include "common/log.h"
#include "runtime/runtime.h"

namespace agora {

namespace {
enum RankCallOp : uint16_t { kCall = 1, kReply = 2 };
struct PendingCall {
  Waiter w;
  std::vector<std::byte> *reply;
};
}  // namespace

int Runtime::rank_call(Rank target, Payload request, std::vector<std::byte> *reply) {
  PendingCall call{{}, reply};
  WaitNote note{WaitKind::RankCall, (uint64_t)target};
  // Patient: a call may block on the target (a read of a pipe).
  return noted_wait(
      note, call.w,
      [&] {
        send_request(target, {Channel::RankCall, kCall, 0, (uint64_t)(uintptr_t)&call, 0, 0}, request);
        return AGORA_OK;
      },
      true);
}

void Runtime::rank_call_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kCall:
      rank_calls_->enqueue(m.src, m.a, p);
      break;
    case kReply: {
      auto *call = reinterpret_cast<PendingCall *>(m.a);
      call->reply->assign(p.data, p.data + p.size);
      call->w.complete(AGORA_OK);
      break;
    }
    default:
      fatal("rank-call message with unknown operation %u from rank %d", (unsigned)m.op, m.src);
  }
}

void Runtime::rank_call_reply(Rank to, uint64_t token, const std::vector<std::byte> &reply) {
  std::lock_guard<std::mutex> g(lock_);
  // The requester may have stopped polling (a long call): wake its service.
  send_request(to, {Channel::RankCall, kReply, 0, token, 0, 0}, {reply.data(), reply.size()});
}

}  // namespace agora
