// Entry points that enter the runtime run it on the calling thread's
// private stack (see runtime/global_stacks.h for why). Use at the top of an
// API function, which then re-enters itself on the private stack:
//
//     int agora_lock(agora_lock_t *lock) {
//       AGORA_ON_PRIVATE_STACK(agora_lock(lock));
//       ...
//
// Outside program mode, or already on a private stack, it costs one
// thread-local range check. The arguments are read from the caller's stack
// before the runtime takes any lock (a fault there is served as usual).
#pragma once
#include <type_traits>
#include <utility>

#include "platform/platform.h"
#include "runtime/global_stacks.h"

namespace agora {

template <typename F>
auto on_private_stack(F &&f) -> decltype(f()) {
  using R = decltype(f());
  struct Call {
    F *f;
    std::conditional_t<std::is_void_v<R>, char, R> result{};
    static void *run(void *self) {
      auto *c = static_cast<Call *>(self);
      if constexpr (std::is_void_v<R>)
        (*c->f)();
      else
        c->result = (*c->f)();
      return nullptr;
    }
  } call{&f};
  // call lives on the global stack; the runtime only reads f's captures
  // and writes the result through it once it has returned.
  platform::call_on_stack(&Call::run, &call, (void *)private_stack_top());
  if constexpr (!std::is_void_v<R>) return call.result;
}

}  // namespace agora

#define AGORA_ON_PRIVATE_STACK(self_call) \
  if (::agora::on_global_stack()) return ::agora::on_private_stack([&] { return self_call; })
