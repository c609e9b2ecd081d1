// fork(): the global range is mapped MAP_SHARED, so without this a child
// would share it with the job (its stores appearing on every rank) and
// would wait forever on a protocol that does not know it.
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "platform/platform.h"

namespace agora::platform {

namespace {
void (*g_child_hook)() = nullptr;
int g_memory_fd = -1;             // the global memory object, closed in a child
int g_pool_fd = -1;               // the cache's frame pool, likewise
std::byte *g_app_view = nullptr;  // the application view, replaced in a child
size_t g_app_size = 0;
bool g_registered = false;

void in_child() {
  // The child holding the descriptor would keep the job's memory alive
  // after the job ends.
  // The application view is not MADV_DONTFORK (the frame pool maps slots
  // into it, and a mapping made later would not inherit the flag, nor merge
  // with neighbours that have it): a child replaces it with no memory.
  if (g_app_view)  // nothing better to do in the child if this fails
    (void)mmap(g_app_view, g_app_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  g_app_view = nullptr;
  if (g_memory_fd >= 0) close(g_memory_fd);
  if (g_pool_fd >= 0) close(g_pool_fd);
  g_memory_fd = g_pool_fd = -1;
  if (g_child_hook) g_child_hook();
}
}  // namespace

bool vm_exclude_from_fork(const GlobalRange &range, std::string *error) {
  if (madvise(range.service_view, range.size, MADV_DONTFORK) != 0) {
    *error = std::string("cannot keep global memory out of fork() children (madvise): ") + system_error_text(errno);
    return false;
  }
  g_app_view = range.app_view;
  g_app_size = range.size;
  g_memory_fd = range.fd;
  return true;
}

bool vm_exclude_pool_from_fork(const FramePool &pool, std::string *error) {
  if (madvise(pool.view, pool.slots * pool.page, MADV_DONTFORK) != 0) {
    *error =
        std::string("cannot keep the cache's frames out of fork() children (madvise): ") + system_error_text(errno);
    return false;
  }
  g_pool_fd = pool.fd;
  return true;
}

bool fork_child_hook_install(void (*child)(), std::string *error) {
  g_child_hook = child;
  if (!child) {
    g_memory_fd = g_pool_fd = -1;
    g_app_view = nullptr;
  }
  if (g_registered || !child) return true;
  int rc = pthread_atfork(nullptr, nullptr, in_child);
  if (rc != 0) {
    *error = std::string("pthread_atfork failed: ") + system_error_text(rc);
    return false;
  }
  g_registered = true;
  return true;
}

}  // namespace agora::platform
