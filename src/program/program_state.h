// Program mode as the API layer sees it (program_mode.cpp).
#pragma once

namespace agora {
// Agora was started before main by a program built with agoracc.
bool program_started();
// The job is ending (exit on rank 0, or a serving rank's end): the next
// agora_finalize is the real one.
bool program_finishing();
// The calling thread runs main (rank 0, program mode).
bool program_in_main();
// The job has ended here: the program's heap is libc's again.
bool program_finished();
}  // namespace agora
