// How threads waiting inside the library wait (AGORA_WAIT, docs/service.md),
// and whether the job has more busy threads on a node than the node's cores
// (reported; spinning waiters yield their core when idle, and measured
// faster than sleeping ones even then, so auto spins).
#pragma once
#include <string>

#include "common/config.h"
#include "transport/mpi/mpi_transport.h"

namespace agora {

struct WaitDecision {
  bool block = false;  // waiting threads sleep; every message rings its destination
  std::string why;     // for the debug log
};

// Collective over the world (every rank calls it, whatever its AGORA_WAIT),
// so that all ranks agree: a sender must know whether to ring.
WaitDecision decide_wait_mode(const Config &config, MpiTransport &transport);

}  // namespace agora
