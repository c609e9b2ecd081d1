// Fork-join threads across ranks: create a thread on any rank, join it from
// any rank. A thread lives in a table on the rank that runs it, under an id
// that rank assigns (1, 2, ...); (rank, id) is its handle.
//
// Consistency: creating is a release by the creator and an acquire by the new
// thread; exiting is a release and joining an acquire. Both cross ranks
// through the engine's hooks (release, release_info, acquire); on one rank
// every thread already sees the same memory, so local creates and joins skip
// them.
//
// Create waits for the target's reply (one round trip) so that the handle is
// known to the target before anyone can join it, and so that a function the
// target cannot start is an error of the create. Starting the OS thread is
// the host's callback: this service never calls the OS.
#pragma once
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "protocol/engine.h"
#include "transport/message.h"

namespace agora {

// A create in flight: on completion w.status is 0 and id is set, or
// w.status is negative.
struct ThreadCreateOp {
  Waiter w;
  uint64_t id = 0;
};

enum class JoinError : uint8_t { None, Unknown, AlreadyJoined, BeingJoined };

// A join in flight: on completion w.status is 0 and ret is set, or w.status
// is negative and error says why.
struct ThreadJoinOp {
  Waiter w;
  uint64_t ret = 0;
  JoinError error = JoinError::None;
};

class ThreadService {
 public:
  // Starts fn (an opaque reference the host encoded) with arg as thread `id`
  // of this rank; returns 0 or a negative status (after reporting why). The
  // thread must call exited(id, ret) when fn returns.
  using Starter = std::function<int(uint64_t id, Payload fn, uint64_t arg)>;

  ThreadService(ComponentHost &host, ProtocolEngine &engine, Starter start)
      : host_(host), engine_(engine), start_(std::move(start)) {}

  void create(Rank target, Payload fn, uint64_t arg, ThreadCreateOp *op);
  void join(Rank rank, uint64_t id, ThreadJoinOp *op);
  // The thread `id` of this rank returned ret.
  void exited(uint64_t id, uint64_t ret);
  void on_message(const MsgHeader &m, Payload p);

  // exit(status) by a thread of this rank ends the job from rank 0, where
  // main's exit handlers live (program mode): after publishing this rank's
  // writes, rank 0's handler gets the status (quick: _exit, no handlers)
  // once it has acquired them. The handler is the host's: it starts the
  // exit, never runs it under the host's lock.
  using ExitHandler = std::function<void(int status, bool quick)>;
  void set_exit_handler(ExitHandler handler) { on_exit_ = std::move(handler); }
  void request_exit(int status, bool quick);

  // Threads started on this rank that have not exited.
  size_t running() const { return running_; }
  // Monotonic counts for deciding that no thread runs anywhere: creates
  // issued here, and threads that ended here (or failed to start).
  uint64_t created() const { return created_; }
  uint64_t ended() const { return exited_; }

 private:
  enum Op : uint16_t { kCreate = 1, kCreated = 2, kJoin = 3, kJoined = 4, kExit = 5 };
  struct Joiner {
    Rank rank = -1;      // -1: nobody is joining yet
    uint64_t token = 0;  // the joiner's ThreadJoinOp
  };
  struct Thread {
    bool finished = false;  // exited, and its release (if any) is published
    uint64_t ret = 0;
    std::vector<std::byte> release_info;  // for a joiner on another rank
    Joiner joiner;
  };

  int start_here(Payload fn, uint64_t arg, uint64_t *id);
  void join_here(uint64_t id, Joiner j);
  void finish(uint64_t id);
  void reply_join(Joiner j, JoinError error, uint64_t ret, Payload info);
  void joined(uint64_t token, JoinError error, uint64_t ret, Payload info, bool remote);

  ComponentHost &host_;
  ProtocolEngine &engine_;
  Starter start_;
  ExitHandler on_exit_;   // rank 0's (none: exit requests are ignored)
  uint64_t last_id_ = 0;  // ids 1..last_id_ were handed out here
  size_t running_ = 0;
  uint64_t created_ = 0, exited_ = 0;
  std::unordered_map<uint64_t, Thread> threads_;  // started here, not yet joined
};

}  // namespace agora
