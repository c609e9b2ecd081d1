// What agora_malloc_placed keeps (rank 0's sequencer, a caller's request)
// now lives with the memory layer, beside the MPI-free MemoryService that
// will take over placed_memory.cpp's message handling.
#pragma once
#include "memory/placed_sequencer.h"
