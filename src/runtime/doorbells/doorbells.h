// Doorbells (docs/service.md): the service threads of the other ranks this
// rank can wake when it asks them to act: by signal on this node and in
// this PID namespace, else by datagram to their remote doorbell (a UDP
// socket; none where only their nap bounds the delay). At start-up every
// rank learns which it can ring and how (exchange); with AGORA_DEBUG the
// rings are reported at finalize. This class owns the doorbells and this
// rank's remote doorbell socket; it reaches the rank through DoorbellsHost.
// Rings are made with the runtime's lock held; the socket is read by the
// service thread (remote_fd).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/stats.h"
#include "common/types.h"
#include "platform/platform.h"

namespace agora {

class DoorbellsHost {
 public:
  virtual ~DoorbellsHost() = default;
  virtual Rank rank() const = 0;
  virtual Rank nranks() const = 0;
  virtual bool same_node(Rank rank) const = 0;
  // Collective: every rank's `mine`, in rank order (taken under the runtime's lock).
  virtual std::vector<uint64_t> allgather(const std::vector<uint64_t> &mine) = 0;
  virtual Stats &stats() = 0;
};

class Doorbells {
 public:
  explicit Doorbells(DoorbellsHost &host) : host_(host) {}
  Doorbells(const Doorbells &) = delete;
  Doorbells &operator=(const Doorbells &) = delete;

  // init, once the service thread (service_tid) runs: collective.
  void exchange(const Config &config, int service_tid);
  // After the service thread has stopped.
  void close_remote();
  void report() const;
  // This rank's remote doorbell socket while some rank cannot ring it by
  // signal (the service thread also waits on it), else -1.
  int remote_fd() const { return remote_fd_.load(std::memory_order_relaxed); }

  // Can `dst` be rung at all, and by signal?
  bool ringable(Rank dst) const { return dst >= 0 && dst < (Rank)bells_.size() && bells_[dst].ringable(); }
  bool by_signal(Rank dst) const { return dst >= 0 && dst < (Rank)bells_.size() && bells_[dst].pid != 0; }
  // Every other rank is rung by signal (none across hosts).
  bool all_by_signal() const;
  void ring(Rank dst);
  // Rings dst's service thread to act on what was just sent to it (at most
  // one ring per kRingInterval_s, AGORA_SERVICE=adaptive only).
  void ring_to_act(Rank dst, ServiceMode service);

 private:
  // A service thread to ring: by signal if pid, else by datagram (udp_port; 0: none).
  struct Doorbell {
    int pid = 0, tid = 0, signo = 0;
    uint32_t udp_address = 0;  // host byte order
    uint16_t udp_port = 0;
    double last_ring = 0;       // one ring wakes it for a burst: its naps restart short
    uint64_t rings = 0;         // by signal; reported with AGORA_DEBUG
    uint64_t remote_rings = 0;  // by datagram; likewise
    bool ringable() const { return pid != 0 || udp_port != 0; }
  };
  // The remote doorbell's socket, or -1 with the reason in *why.
  int open_remote(const Config &config, uint16_t *port, std::vector<platform::Ipv4Interface> *interfaces,
                  std::string *why);

  DoorbellsHost &host_;
  std::vector<Doorbell> bells_;
  std::atomic<int> remote_fd_{-1};
};

}  // namespace agora
