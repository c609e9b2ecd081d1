// Program mode's request to the runtime, made by the startup object before
// agora_init (src/program/): the executable's windows to share (its .data
// and .bss, as collected by src/program/agora-program.ld). Without a
// request the runtime starts as a library (SPMD / fork-join programs).
#pragma once
#include <cstdint>

namespace agora {

struct ProgramRequest {
  uintptr_t data_lo = 0, data_hi = 0;  // page aligned, [lo, hi)
  uintptr_t bss_lo = 0, bss_hi = 0;
};

void program_request_set(const ProgramRequest &request);
const ProgramRequest *program_request();  // nullptr: not program mode

}  // namespace agora
