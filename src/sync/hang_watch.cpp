#include "sync/hang_watch.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "common/log.h"

namespace agora {

namespace {
struct Wire {
  double waited_s, outside_s;
  uint8_t blocked;
};

// Each line of a rank's waits, prefixed with the rank.
std::string indent(Rank r, const std::string &lines) {
  std::string out;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out += "  rank " + std::to_string(r) + ": " + line + "\n";
  return out;
}

void print_lines(const std::string &text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) log_error("%s", line.c_str());
}
}  // namespace

void HangWatch::send_state(Rank to, Op op, uint64_t id, const RankState &s) {
  std::vector<std::byte> buf(sizeof(Wire) + s.waits.size());
  Wire w{s.waited_s, s.outside_s, (uint8_t)s.blocked};
  std::memcpy(buf.data(), &w, sizeof w);
  std::memcpy(buf.data() + sizeof w, s.waits.data(), s.waits.size());
  host_.send_control(to, {Channel::Watch, op, 0, id, s.sent, s.received}, {buf.data(), buf.size()});
}

RankState HangWatch::decode(Payload p, const MsgHeader &m) {
  RankState s;
  if (p.size < sizeof(Wire)) return s;
  Wire w;
  std::memcpy(&w, p.data, sizeof w);
  s.blocked = w.blocked;
  s.waited_s = w.waited_s;
  s.outside_s = w.outside_s;
  s.sent = m.b;
  s.received = m.c;
  s.waits.assign((const char *)p.data + sizeof w, p.size - sizeof w);
  return s;
}

void HangWatch::tick(double now) {
  if (stopped_) return;
  now_ = now;
  if (started_ < 0) started_ = last_ack_ = now;
  bool watcher = host_.rank() == 0;
  if (watcher && heard_.empty()) heard_.resize(host_.nranks());
  if (now - last_report_ >= options_.period) {
    last_report_ = now;
    RankState mine = snapshot_();
    if (watcher)
      heard_[0] = {true, now, mine};
    else {
      send_state(0, kReport, 0, mine);
      warn_silent_watcher(now, mine);
    }
  }
  if (watcher) watcher_evaluate(now);
}

void HangWatch::on_message(const MsgHeader &m, Payload p) {
  if (stopped_) return;
  switch (m.op) {
    case kReport:
      if (heard_.empty()) heard_.resize(host_.nranks());
      heard_[m.src] = {true, now_, decode(p, m)};
      host_.send_control(m.src, {Channel::Watch, kAck, 0, 0, 0, 0});
      break;
    case kAck:
      last_ack_ = now_;
      break;
    case kProbe:
      last_ack_ = now_;
      send_state(m.src, kProbeReply, m.a, snapshot_());
      break;
    case kProbeReply:
      if (wave_ == 0 || m.a != probe_id_) break;  // an abandoned wave's
      replies_[m.src] = {true, now_, decode(p, m)};
      if (std::all_of(replies_.begin(), replies_.end(), [](const Heard &h) { return h.ever; })) wave_complete(now_);
      break;
  }
}

void HangWatch::watcher_evaluate(double now) {
  if (wave_ != 0) {
    // A rank that cannot answer (stopped) is not deadlocked: give up the wave.
    if (now - wave_started_ > 10 * options_.period) {
      wave_ = 0;
      last_probe_end_ = now;
    }
  } else if (now - last_probe_end_ >= options_.period) {
    bool all_blocked = std::all_of(heard_.begin(), heard_.end(), [&](const Heard &h) {
      return h.ever && h.state.blocked && now - h.at <= 3 * options_.period;
    });
    if (all_blocked) start_wave(now);
  }
  warn_long_waits(now);
}

void HangWatch::start_wave(double now) {
  ++probe_id_;
  wave_ = wave_ == 0 ? 1 : 2;
  wave_started_ = now;
  replies_.assign(host_.nranks(), Heard{});
  replies_[0] = {true, now, snapshot_()};
  for (Rank r = 1; r < host_.nranks(); ++r) host_.send_control(r, {Channel::Watch, kProbe, 0, probe_id_, 0, 0});
  if (host_.nranks() == 1) wave_complete(now);
}

void HangWatch::wave_complete(double now) {
  bool all_blocked = std::all_of(replies_.begin(), replies_.end(), [](const Heard &h) { return h.state.blocked; });
  if (!all_blocked) {
    wave_ = 0;
    last_probe_end_ = now;
    return;
  }
  if (wave_ == 1) {
    first_wave_.clear();
    for (const Heard &h : replies_) first_wave_.push_back(h.state);
    start_wave(now);
    return;
  }
  // Second wave: nobody sent or received anything since the first, and
  // nothing is in flight.
  uint64_t sent = 0, received = 0;
  bool unchanged = true;
  for (Rank r = 0; r < host_.nranks(); ++r) {
    const RankState &a = first_wave_[r], &b = replies_[r].state;
    unchanged &= a.sent == b.sent && a.received == b.received;
    sent += b.sent;
    received += b.received;
  }
  wave_ = 0;
  last_probe_end_ = now;
  if (!unchanged || sent != received) return;
  std::string report;
  for (Rank r = 0; r < host_.nranks(); ++r) report += indent(r, replies_[r].state.waits);
  log_error(
      "deadlock: every rank is blocked inside Agora and no message is in flight, so no rank "
      "can ever continue. Where each rank waits:");
  print_lines(report);
  fatal("deadlock detected; the job ends");
}

void HangWatch::warn_long_waits(double now) {
  // Ranks waiting inside Agora, and ranks they may wait for: outside Agora
  // (running) or silent (stopped, or unable to run) for as long.
  double waited = 0, away = 0;
  std::string waiters, culprits;
  for (Rank r = 0; r < host_.nranks(); ++r) {
    const Heard &h = heard_[r];
    double silent = now - (h.ever ? h.at : started_);  // never heard: since the watch started
    if (silent >= options_.warn_after) {
      away = std::max(away, silent);
      culprits += "  rank " + std::to_string(r) + " has not been heard from for " + std::to_string((int)silent) +
                  " s (stopped, or its process cannot run)\n";
      continue;
    }
    if (h.state.waited_s > 0) {
      waited = std::max(waited, h.state.waited_s);
      std::string first = h.state.waits.substr(0, h.state.waits.find('\n'));
      waiters += "  rank " + std::to_string(r) + " has waited " + std::to_string((int)h.state.waited_s) + " s in " +
                 first + "\n";
    } else if (h.state.outside_s >= options_.warn_after) {
      away = std::max(away, h.state.outside_s);
      culprits += "  rank " + std::to_string(r) + " has been outside Agora (no thread waiting in it) for " +
                  std::to_string((int)h.state.outside_s) + " s\n";
    }
  }
  double stuck = std::min(waited, away);
  if (waiters.empty() || culprits.empty()) {
    warned_level_ = 0;
    return;
  }
  if (options_.timeout > 0 && stuck >= options_.timeout) {
    log_error("ranks wait inside Agora for ranks that do not come (AGORA_HANG_TIMEOUT=%g s):", options_.timeout);
    print_lines(waiters + culprits);
    fatal("no progress for %d s; the job ends", (int)stuck);
  }
  double next = warned_level_ == 0 ? options_.warn_after : warned_level_ * 2;
  if (stuck < next) return;
  warned_level_ = next;
  log_error(
      "warning: ranks have waited inside Agora for %d s while others stay away (a long "
      "computation, or a stopped or stuck rank?):",
      (int)stuck);
  print_lines(waiters + culprits);
}

void HangWatch::warn_silent_watcher(double now, const RankState &mine) {
  double silent = now - last_ack_;
  double stuck = std::min(silent, mine.waited_s);
  if (stuck < options_.warn_after) {
    silent_warned_ = 0;
    return;
  }
  if (options_.timeout > 0 && stuck >= options_.timeout)
    fatal(
        "rank 0, which watches for hangs, has not answered for %d s while this rank waits in %s; "
        "the job ends (AGORA_HANG_TIMEOUT)",
        (int)silent, mine.waits.substr(0, mine.waits.find('\n')).c_str());
  double next = silent_warned_ == 0 ? options_.warn_after : silent_warned_ * 2;
  if (stuck < next) return;
  silent_warned_ = next;
  log_error(
      "warning: rank 0 has not answered for %d s (stopped, or it cannot run) while this rank "
      "waits in %s",
      (int)silent, mine.waits.substr(0, mine.waits.find('\n')).c_str());
}

}  // namespace agora
