// Doorbells (doorbells.h, docs/service.md): at start-up every rank learns
// which service threads it can ring (same node, same PID namespace) and with
// which signal, and, for the others, where their remote doorbell (a UDP
// socket) listens; ringing one wakes it from its nap; with AGORA_DEBUG the
// rings are reported at finalize.
#include "runtime/doorbells/doorbells.h"

#include <algorithm>
#include <string>

#include "common/log.h"
#include "runtime/service_timing.h"

namespace agora {

namespace {
// What each rank tells the others, in the start-up allgather: its signal
// doorbell, then its remote doorbell's port and up to kMaxAddresses IPv4
// addresses (address << 32 | netmask each; more are not announced).
constexpr size_t kMaxAddresses = 8;
enum Field : size_t { kPidNamespace, kPid, kTid, kSignal, kPort, kAddressCount, kAddresses };
constexpr size_t kFields = kAddresses + kMaxAddresses;

std::vector<platform::Ipv4Interface> addresses_of(const uint64_t *fields) {
  std::vector<platform::Ipv4Interface> out;
  for (size_t i = 0; i < fields[kAddressCount] && i < kMaxAddresses; ++i)
    out.push_back({(uint32_t)(fields[kAddresses + i] >> 32), (uint32_t)fields[kAddresses + i]});
  return out;
}
}  // namespace

void Doorbells::ring(Rank dst) {
  Doorbell &d = bells_[dst];
  if (d.pid) {
    d.rings++;
    platform::doorbell_ring(d.pid, d.tid, d.signo);
  } else if (platform::remote_doorbell_ring(remote_fd_.load(std::memory_order_relaxed), d.udp_address, d.udp_port)) {
    d.remote_rings++;
    host_.stats().remote_doorbells++;
  }
}

void Doorbells::ring_to_act(Rank dst, ServiceMode service) {
  Doorbell &d = bells_[dst];
  if (!d.ringable() || dst == host_.rank() || service != ServiceMode::Adaptive) return;
  double now = platform::now_seconds();
  if (now - d.last_ring < service_timing::kRingInterval_s) return;
  d.last_ring = now;
  ring(dst);
}

bool Doorbells::all_by_signal() const {
  bool all = true;
  for (const Doorbell &d : bells_) all &= d.pid != 0;
  return all;
}

// The remote doorbell's socket, or -1 with the reason in *why.
int Doorbells::open_remote(const Config &config, uint16_t *port, std::vector<platform::Ipv4Interface> *interfaces,
                           std::string *why) {
  if (config.remote_doorbell == RemoteDoorbellMode::Off) {
    *why = "off (AGORA_REMOTE_DOORBELL=off)";
    return -1;
  }
  *interfaces = platform::ipv4_interfaces();
  if (interfaces->empty()) {
    *why = "off: this host has no IPv4 address but loopback";
    return -1;
  }
  std::string error;
  int fd = platform::remote_doorbell_open(port, &error);
  if (fd < 0) *why = "off: " + error;
  return fd;
}

void Doorbells::exchange(const Config &config, int service_tid) {
  uint16_t port = 0;
  std::vector<platform::Ipv4Interface> interfaces;
  std::string why_off;
  int fd = open_remote(config, &port, &interfaces, &why_off);
  // (PID namespace, pid, tid, signal) of every rank. A rank is rung by
  // signal only if MPI puts it on this node and its pid means the same
  // process here; the others by datagram, if both have a socket.
  std::vector<uint64_t> mine(kFields, 0);
  mine[kPidNamespace] = platform::pid_namespace_id();
  mine[kPid] = (uint64_t)platform::process_id();
  mine[kTid] = (uint64_t)service_tid;
  mine[kSignal] = (uint64_t)platform::doorbell_signal();
  if (fd >= 0) {
    mine[kPort] = port;
    for (size_t i = 0; i < interfaces.size() && i < kMaxAddresses; ++i)
      mine[kAddresses + i] = (uint64_t)interfaces[i].address << 32 | interfaces[i].netmask;
    mine[kAddressCount] = std::min(interfaces.size(), kMaxAddresses);
  }
  std::vector<uint64_t> all = host_.allgather(mine);
  const Rank me = host_.rank(), nranks = host_.nranks();
  bells_.assign(nranks, Doorbell{});
  std::string rung, node, remote;
  bool rung_remotely = false;  // some rank cannot ring this one by signal
  for (Rank r = 0; r < nranks; ++r) {
    const uint64_t *theirs = &all[kFields * r];
    if (host_.same_node(r)) node.append(" ").append(std::to_string(r));
    if (r == me) continue;
    if (host_.same_node(r) && mine[kPidNamespace] != 0 && theirs[kPidNamespace] == mine[kPidNamespace]) {
      bells_[r] = {(int)theirs[kPid], (int)theirs[kTid], (int)theirs[kSignal]};
      rung.append(" ").append(std::to_string(r));
      continue;
    }
    rung_remotely = true;
    std::vector<platform::Ipv4Interface> addresses = addresses_of(theirs);
    if (fd < 0 || theirs[kPort] == 0 || addresses.empty()) continue;
    Doorbell &d = bells_[r];
    d.udp_address = addresses[platform::ipv4_pick_address(interfaces, addresses)].address;
    d.udp_port = (uint16_t)theirs[kPort];
    remote.append(" ").append(std::to_string(r)).append("@").append(platform::ipv4_text(d.udp_address));
    remote.append(":").append(std::to_string(d.udp_port));
  }
  log_debug("doorbell: signal %d, same node [%s ], rings [%s ] (same node and PID namespace)",
            platform::doorbell_signal(), node.c_str(), rung.c_str());
  if (!rung_remotely) {
    // Every rank rings this one by signal: no socket to wait on.
    platform::remote_doorbell_close(fd);
  } else if (fd < 0) {
    log_debug("remote doorbell: %s; ranks out of the signal's reach wait for the service thread's nap",
              why_off.c_str());
  } else {
    std::string own;
    for (size_t i = 0; i < interfaces.size() && i < kMaxAddresses; ++i)
      own.append(" ").append(platform::ipv4_text(interfaces[i].address));
    log_debug("remote doorbell: UDP port %u on [%s ], rings [%s ]", (unsigned)port, own.c_str(), remote.c_str());
    remote_fd_.store(fd);
  }
}

void Doorbells::close_remote() { platform::remote_doorbell_close(remote_fd_.exchange(-1)); }

void Doorbells::report() const {
  if (!log_debug_enabled()) return;
  std::string counts, remote;
  for (Rank r = 0; r < host_.nranks(); ++r) {
    if (r == host_.rank()) continue;
    counts.append(" ").append(std::to_string(r)).append(":").append(std::to_string(bells_[r].rings));
    if (bells_[r].udp_port)
      remote.append(" ").append(std::to_string(r)).append(":").append(std::to_string(bells_[r].remote_rings));
  }
  log_debug("doorbell: rings sent to rank:count [%s ]; application signals handed back %llu", counts.c_str(),
            (unsigned long long)platform::doorbell_signals_handed_back());
  if (remote_fd_.load() >= 0 || !remote.empty())
    log_debug("remote doorbell: datagrams sent to rank:count [%s ]; taken by the service thread %llu", remote.c_str(),
              (unsigned long long)platform::doorbell_datagrams_taken());
}

}  // namespace agora
