// The thread table behind PARMACS CREATE / WAIT_FOR_END (include/agora/parmacs.h).
// It lives in the library, private to the process: SPLASH programs create
// and join their threads from main, so the table is main's rank's.
#include <mutex>
#include <vector>

#include "agora/agora.h"
#define AGORA_PARMACS_LIBRARY  // declarations only: no program globals in the library
#include "agora/parmacs.h"
#include "common/log.h"

namespace {
std::mutex g_table_mutex;
std::vector<agora_thread_t> g_table;  // started, not yet joined, in creation order
}  // namespace

extern "C" int agora_parmacs_create(void (*fn)(void)) {
  if (!fn) {
    agora::log_error("PARMACS CREATE: the thread function is NULL");
    return AGORA_ERR_INVALID_ARGUMENT;
  }
  agora_thread_t t;
  // SPLASH thread functions take no argument; under the x86-64 and
  // aarch64 ABIs calling one with an ignored argument is safe (the SPLASH-3 pthread macros do the same).
  int status = agora_thread_create(&t, reinterpret_cast<void *(*)(void *)>(fn), nullptr);
  if (status != AGORA_OK) return status;
  std::lock_guard<std::mutex> hold(g_table_mutex);
  g_table.push_back(t);
  return AGORA_OK;
}

extern "C" int agora_parmacs_wait_for_end(void) {
  std::vector<agora_thread_t> started;
  {
    std::lock_guard<std::mutex> hold(g_table_mutex);
    started.swap(g_table);
  }
  int first_failure = AGORA_OK;
  for (const agora_thread_t &t : started) {
    int status = agora_thread_join(t, nullptr);
    if (status != AGORA_OK && first_failure == AGORA_OK) first_failure = status;
  }
  return first_failure;
}
