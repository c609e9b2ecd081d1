#include "runtime/rank_calls/rank_calls.h"

#include <thread>

#include "common/log.h"

namespace agora {

void RankCalls::set_handler(Handler handler) {
  std::lock_guard<std::mutex> g(mutex_);
  handler_ = std::move(handler);
}

bool RankCalls::has_handler() {
  std::lock_guard<std::mutex> g(mutex_);
  return (bool)handler_;
}

void RankCalls::enqueue(Rank from, uint64_t token, Payload request) {
  std::lock_guard<std::mutex> g(mutex_);
  if (stopped_) return;
  queue_.push_back({from, token, std::vector<std::byte>(request.data, request.data + request.size)});
  if (idle_ > 0) {
    ready_.notify_one();
    return;
  }
  if (workers_ >= kMaxWorkers) return;  // the next worker to finish takes it
  workers_++;
  // Detached: a worker blocked in a system call when the job ends must not
  // hold up the end; this object outlives the runtime (see stop()).
  std::thread([this] { work(); }).detach();
}

void RankCalls::work() {
  std::unique_lock<std::mutex> g(mutex_);
  for (;;) {
    idle_++;
    ready_.wait(g, [this] { return stopped_ || !queue_.empty(); });
    idle_--;
    if (stopped_) return;
    Request r = std::move(queue_.front());
    queue_.pop_front();
    Handler handler = handler_;
    g.unlock();
    std::vector<std::byte> reply;
    if (handler)
      handler(r.from, r.bytes.data(), r.bytes.size(), &reply);
    else
      fatal("rank %d asked this rank to run a call, but no handler is set (not program mode?)", r.from);
    g.lock();
    if (stopped_) return;
    // Reply without mutex_: the replier takes the host's lock, under which
    // dispatch calls enqueue.
    replying_++;
    g.unlock();
    replier_(r.from, r.token, reply);
    g.lock();
    if (--replying_ == 0) replied_.notify_all();
  }
}

void RankCalls::stop() {
  std::unique_lock<std::mutex> g(mutex_);
  stopped_ = true;
  ready_.notify_all();
  replied_.wait(g, [this] { return replying_ == 0; });
}

}  // namespace agora
