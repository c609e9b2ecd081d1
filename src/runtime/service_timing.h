// Every time the runtime waits or paces itself by, in one place: how often a
// service thread is rung, how long a waiting thread polls before it yields or
// sleeps, how the service thread naps. The figures behind them are in
// docs/service.md (2 cores, Open MPI over shared memory); change one only
// with a measurement there.
#pragma once
#include <cstdint>

namespace agora::service_timing {

// ---- doorbells (Runtime::send_request) ----
// At most one ring per destination in this time: one ring wakes a napping
// service for a whole burst (its naps restart short), and a ring costs the
// sender a system call (~1.3 us; without the limit the lock round trip went
// from 0.96 to 2.3 us: docs/service.md, "The doorbell").
constexpr double kRingInterval_s = 20e-6;

// ---- a memory server (Runtime::serve_as_memory_server) ----
// A server sleeps until rung, waking only to send the hang watch's report
// every kHangWatchReport_s (below): 2 wake-ups a second when idle, ~0 CPU
// (docs/memory-servers.md).

// ---- a thread waiting inside the library (Runtime::wait) ----
// Idle polls (nothing received) spent spinning with a pause before the
// waiter starts yielding its core on every idle poll: with ranks
// outnumbering cores another rank needs the core (docs/service.md,
// "Oversubscribed nodes", AGORA_WAIT=spin).
constexpr unsigned kIdlePollsBeforeYield = 256;
// A patient wait (a join, finalize) idle this long stops polling and sleeps,
// leaving the messages to the service thread and the core to the threads it
// waits for (docs/service.md, "Patient waits")...
constexpr double kPatientSwitch_s = 2e-3;
// ...checked only every this many idle polls (a power of two: a mask), so
// the clock is not read on every poll.
constexpr unsigned kPatientCheckEvery = 64;
static_assert((kPatientCheckEvery & (kPatientCheckEvery - 1)) == 0, "a power of two");
// A wait with a deadline (agora_cond_timedwait) naps between polls: this long
// while it polls itself, longer with AGORA_WAIT=block, where the service
// thread serves and only the deadline needs checking.
constexpr uint32_t kTimedWaitNapSpin_us = 20;
constexpr uint32_t kTimedWaitNapBlock_us = 100;
// Finalize checks this often whether this rank's agora threads have returned
// (the service thread serves meanwhile).
constexpr uint32_t kFinalizeThreadsNap_us = 100;

// ---- the service thread (Runtime::service_loop) ----
// The first nap after activity: naps then double up to the nap cap,
// AGORA_SERVICE_SLEEP_US (Config::service_sleep_us, default 1000 us: an idle
// service wakes at most ~1000 times a second and costs a computing thread on
// its core ~2 %; docs/service.md, "What it costs"). While an application
// thread of the rank polls, the service naps the same way, so that it is
// back soon after a short wait ends (the thread may stop waiting and compute
// at any moment; docs/service.md, "The doorbell, measured").
constexpr uint32_t kFirstNap_us = 1;
// The first nap while an application thread of the rank waits (and polls
// for it): the service is back within about max(this, the wait's length)
// after the wait ends. Measured on 2 ranks (medians of 5): jacobi 2048²
// under sc 8.72 / 8.74 / 9.12 ms/iter starting at 1 / 64 / 1000 us (1000:
// the fixed nap of before); tsp 17 under hlrc 0.647 / 0.637 / 0.627 s (the
// shortest naps wake most often while lock waits poll).
constexpr uint32_t kWaitingFirstNap_us = 64;
// AGORA_WAIT=block: after waking a sleeping thread, the service holds back
// (up to kWokenHoldNaps naps of kWokenHoldNap_us, 1 ms in all) until that
// thread has run, so it makes its access before the next message can take
// the page (docs/service.md, AGORA_WAIT=block); bounded, because a thread
// the scheduler keeps off the cores must not stop the service.
constexpr int kWokenHoldNaps = 100;
constexpr uint32_t kWokenHoldNap_us = 10;

// ---- the hang watch (Runtime::hang_tick) ----
// How often the service thread lets the hang watch look at this rank and
// exchange snapshots: well below the watch's warning time (AGORA_HANG_WARN,
// seconds), and rare enough to cost nothing measurable.
constexpr double kHangWatchTick_s = 0.1;
// How often each rank reports its state to the others (HangWatch::Options::
// period; a deadlock is proven within a few periods): often enough that a
// deadlock is named within seconds, at one small message per rank.
constexpr double kHangWatchReport_s = 0.5;

}  // namespace agora::service_timing
