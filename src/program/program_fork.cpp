// fork() of a program built with agoracc (agora-program.wrap; docs/programs.md).
// Its own object: static links of the API's programs never pull it in, and
// __real_fork exists only where the wrap list applies.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "api/private_stack.h"
#include "common/log.h"
#include "program/program_state.h"
#include "runtime/runtime.h"

using agora::Runtime;

extern "C" {

pid_t __real_fork(void);

// fork() of the program (agora-program.wrap). The calling thread's stack is
// global memory, shared with the job: parent and child would write the same
// frames until the child made its copies (fork_linux.cpp). So the fork runs
// on the thread's private stack, and the parent waits there, on a pipe,
// until the child has copied what it keeps: it returns to its stack only
// once the child's copy is taken. The parent's other threads go on.
pid_t __wrap_fork(void) {
  if (!agora::program_started() || agora::program_finished() || Runtime::in_forked_child()) return __real_fork();
  AGORA_ON_PRIVATE_STACK(__wrap_fork());
  int gate[2];
  if (pipe2(gate, O_CLOEXEC) != 0) {
    int e = errno;
    agora::log_error("fork: cannot make the pipe the parent waits on for the child's copy of global memory: %s",
                     agora::system_error_text(e));
    errno = e;
    return -1;
  }
  pid_t pid = __real_fork();
  if (pid == 0) {  // the copies are made (the fork handler ran)
    close(gate[0]);
    (void)!write(gate[1], "", 1);
    close(gate[1]);
    return 0;
  }
  int e = errno;
  close(gate[1]);
  char byte;
  if (pid > 0)
    while (read(gate[0], &byte, 1) < 0 && errno == EINTR) {
    }
  close(gate[0]);
  errno = e;
  return pid;
}

}  // extern "C"
