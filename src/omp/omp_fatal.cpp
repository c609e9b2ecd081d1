#include "omp/omp_fatal.h"

#include <cstdarg>
#include <cstdio>

#include "program/program_abi.h"

namespace agora::omp {
void fatal(const char *fmt, ...) {
  char message[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  agora_program_fatal(message);
}
}  // namespace agora::omp
