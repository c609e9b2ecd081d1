// The OpenMP runtime is its own library (libagora_omp.so, linked by agoracc
// -fopenmp only), over libagora's exported functions: its fatal errors end
// the job through libagora (agora_program_fatal), like every Agora error.
#pragma once

namespace agora::omp {
[[noreturn]] void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
}  // namespace agora::omp
