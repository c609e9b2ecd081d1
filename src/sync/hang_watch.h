// The hang watch: finds jobs that can no longer make progress, and ranks the
// others wait for that are stopped or stay outside Agora, and says so.
//
// Every rank reports its state to rank 0 (the watcher) every `period`
// seconds. A rank is *blocked* when every application thread it has waits
// inside Agora (lock, barrier, reduce, fault, join, finalize).
//
//  - Deadlock (a proof, not a timeout): when every rank's report says
//    blocked, the watcher runs two probe waves. If every rank is blocked in
//    both and no rank sent or received a message in between, then at the
//    moment between the waves every rank was blocked and no message was in
//    flight (the sums of sent and received agree): nothing can ever wake
//    any rank. The watcher prints where each rank waits and on whom, and
//    ends the job.
//  - A long wait alone is not an error (a rank may compute for minutes while
//    the others wait in a barrier). But when ranks have waited inside Agora
//    for `warn_after` seconds while another rank has been outside Agora (or
//    not heard from: stopped) that long, the watcher warns, naming it (again
//    at 2x, 4x, ... the time). With `timeout` > 0 (AGORA_HANG_TIMEOUT) such
//    a state lasting `timeout` seconds ends the job.
//  - A rank that waits while the watcher itself has not answered for
//    `warn_after` seconds warns (and, with a timeout, ends the job) itself.
//
// The host drives it: tick() from its service thread, snapshot() under its
// lock; watch messages are sent with send_control() and are not counted in
// the message counters the proof compares.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "transport/message.h"

namespace agora {

// One rank's state, as its host sees it.
struct RankState {
  bool blocked = false;
  double waited_s = 0;              // longest current wait inside Agora (0: none)
  double outside_s = 0;             // no thread has waited inside Agora for this long (0: one waits)
  uint64_t sent = 0, received = 0;  // messages, watch messages excluded
  std::string waits;                // where its threads wait and on whom, one line each
};

class HangWatch {
 public:
  struct Options {
    double period = 0.5;     // seconds between reports
    double warn_after = 60;  // AGORA_HANG_WARN
    double timeout = 0;      // AGORA_HANG_TIMEOUT (0: never end the job for a long wait)
  };
  using Snapshot = std::function<RankState()>;

  HangWatch(ComponentHost &host, Options options, Snapshot snapshot)
      : host_(host), options_(options), snapshot_(std::move(snapshot)) {}

  void tick(double now);
  void on_message(const MsgHeader &m, Payload p);
  // Finalize has passed its last collective: no more reports or answers.
  void stop() { stopped_ = true; }

 private:
  enum Op : uint16_t { kReport = 1, kAck = 2, kProbe = 3, kProbeReply = 4 };
  struct Heard {
    bool ever = false;
    double at = 0;  // watcher's clock
    RankState state;
  };

  void send_state(Rank to, Op op, uint64_t id, const RankState &s);
  static RankState decode(Payload p, const MsgHeader &m);
  void watcher_evaluate(double now);
  void start_wave(double now);
  void wave_complete(double now);
  void warn_long_waits(double now);
  void warn_silent_watcher(double now, const RankState &mine);

  ComponentHost &host_;
  Options options_;
  Snapshot snapshot_;
  bool stopped_ = false;
  double last_report_ = -1e9;
  double started_ = -1;       // the first tick (-1: not yet)
  double last_ack_ = -1;      // when the watcher last answered (-1: not yet)
  double silent_warned_ = 0;  // watcher-silence warning threshold reached so far

  // Watcher (rank 0) only.
  std::vector<Heard> heard_;
  double now_ = 0;
  uint64_t probe_id_ = 0;
  int wave_ = 0;  // 0: not probing, 1 or 2
  double wave_started_ = 0, last_probe_end_ = -1e9;
  std::vector<Heard> replies_;  // this wave's
  std::vector<RankState> first_wave_;
  double warned_level_ = 0;  // long-wait warning threshold reached so far
};

}  // namespace agora
