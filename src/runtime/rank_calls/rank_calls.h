// Calls run on another rank for a thread of this one (program mode's
// job-wide file descriptors, src/program/program_descriptors.cpp): a
// request is opaque bytes, the reply too; what they mean is the handler's.
//
// Why not on the service thread: the handler makes system calls (a read of
// a pipe may block for as long as its writer takes), and the service thread
// serves the rank's pages and locks under the runtime's lock. So a request
// is queued (under the runtime's lock, by dispatch) and run by a worker
// thread of this rank, without the lock; a new worker starts whenever every
// worker is busy (a blocked read must not hold up the write that would
// unblock it), up to kMaxWorkers. Workers never touch global memory.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "common/types.h"
#include "transport/message.h"

namespace agora {

class RankCalls {
 public:
  // Runs one request from rank `from`, filling `reply`.
  using Handler = std::function<void(Rank from, const std::byte *request, size_t bytes, std::vector<std::byte> *reply)>;
  // Sends a reply (the host takes its lock).
  using Replier = std::function<void(Rank to, uint64_t token, const std::vector<std::byte> &reply)>;
  static constexpr size_t kMaxWorkers = 64;

  explicit RankCalls(Replier replier) : replier_(std::move(replier)) {}
  void set_handler(Handler handler);
  bool has_handler();
  // A request arrived (any thread; the host's lock may be held: never blocks on a worker).
  void enqueue(Rank from, uint64_t token, Payload request);
  // The job ends (without the host's lock): workers stop taking requests,
  // and once this returns none replies any more (a worker blocked in a call
  // stays blocked). The host never deletes this object: a detached worker
  // may still wake in it.
  void stop();

 private:
  struct Request {
    Rank from;
    uint64_t token;
    std::vector<std::byte> bytes;
  };
  void work();

  Replier replier_;
  std::mutex mutex_;
  std::condition_variable ready_, replied_;
  Handler handler_;
  std::deque<Request> queue_;
  size_t workers_ = 0, idle_ = 0, replying_ = 0;
  bool stopped_ = false;
};

}  // namespace agora
