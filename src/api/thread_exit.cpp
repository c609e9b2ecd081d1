// agora_thread_exit: ends the calling agora thread (or main, in program
// mode) as a return from its function would. The frames between are
// abandoned (C++ destructors in them do not run), as with pthread_exit in C.
#include "agora/agora.h"
#include "common/log.h"
#include "program/program_state.h"
#include "runtime/global_stacks.h"

extern "C" void agora_thread_exit(void *ret) {
  if (!agora::in_body())
    agora::fatal(
        "agora_thread_exit called outside an agora thread%s: there is no thread to end; "
        "the job ends",
        agora::program_started() ? " and not by main"
                                 : " (main of an SPMD or fork-join "
                                   "program returns from main instead)");
  agora::body_exit(ret);
}
