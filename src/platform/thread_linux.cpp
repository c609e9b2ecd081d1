// Threads the runtime starts and joins (contract in platform.h).
#include <pthread.h>

#include <cstring>
#include <memory>

#include "common/log.h"
#include "platform/platform.h"

namespace agora::platform {

static_assert(sizeof(pthread_t) <= sizeof(ThreadHandle), "a pthread_t must fit a ThreadHandle");

namespace {
void *run(void *arg) {
  std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()> *>(arg));
  (*fn)();
  return nullptr;
}
}  // namespace

bool thread_start(std::function<void()> fn, ThreadHandle *out, std::string *error) {
  auto *heap = new std::function<void()>(std::move(fn));
  pthread_t thread;
  int err = pthread_create(&thread, nullptr, run, heap);
  if (err != 0) {
    delete heap;
    *error = system_error_text(err);
    return false;
  }
  *out = (ThreadHandle)thread;
  return true;
}

bool thread_try_join(ThreadHandle thread) { return pthread_tryjoin_np((pthread_t)thread, nullptr) == 0; }

void thread_join(ThreadHandle thread) { pthread_join((pthread_t)thread, nullptr); }

}  // namespace agora::platform
