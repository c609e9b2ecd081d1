// The job-wide libc state of program mode (program_libc.cpp).
#pragma once
#include <cstdint>

namespace agora {
// At start: the page the startup object registered lies in the program's
// shared .bss [bss_lo, bss_hi) (else a fatal error naming the mismatch).
void program_libc_check(uintptr_t bss_lo, uintptr_t bss_hi);
}  // namespace agora
