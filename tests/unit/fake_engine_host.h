// A tiny in-process cluster for unit tests of protocol pieces: each node is
// an EngineHost with its own frames, protections and counters; messages
// queue in order and are delivered when the test says (per-pair order, as
// both real transports guarantee).
#pragma once
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "common/stats.h"
#include "protocol/engine.h"

namespace agora::testing_support {

struct FakeNet;

struct FakeHost final : EngineHost {
  FakeHost(FakeNet *net, Rank rank, Rank nranks, size_t page_size) : net(net), me(rank), n(nranks), page(page_size) {}
  Rank rank() const override { return me; }
  Rank nranks() const override { return n; }
  void send(Rank dst, MsgHeader header, Payload payload) override;
  Stats &stats() override { return counters; }
  size_t page_size() const override { return page; }
  void set_access(PageId p, Access a) override { access[p] = a; }
  std::byte *frame(PageId p) override {
    auto &f = frames[p];
    if (f.empty()) f.assign(page, std::byte{0});
    return f.data();
  }
  // Pages are homed cyclically unless the test places them.
  Rank home_of(PageId p) const override {
    auto it = homes.find(p);
    return it != homes.end() ? it->second : (Rank)(p % (PageId)n);
  }
  bool page_allocated(PageId) const override { return allocated; }

  FakeNet *net;
  Rank me, n;
  size_t page;
  Stats counters;
  bool allocated = true;
  std::map<PageId, Rank> homes;
  std::map<PageId, Access> access;  // the application view's protection, as last set
  std::map<PageId, std::vector<std::byte>> frames;
};

struct FakeNet {
  struct Msg {
    Rank dst;
    MsgHeader header;
    std::vector<std::byte> payload;
  };
  FakeNet(Rank nranks, const char *protocol, size_t page_size = 64) {
    for (Rank r = 0; r < nranks; ++r) hosts.push_back(std::make_unique<FakeHost>(this, r, nranks, page_size));
    for (auto &h : hosts) engines.push_back(protocol_create(protocol, *h));
  }
  // Delivers every queued message and those they cause, in order.
  void run() {
    while (!queue.empty()) {
      Msg m = std::move(queue.front());
      queue.pop_front();
      engines[m.dst]->on_message(m.header, {m.payload.data(), m.payload.size()});
    }
  }
  // Faults `page` on `rank`, runs the network, returns the waiter's status
  // (1 if it never completed).
  int fault(Rank rank, PageId page, Access need) {
    Waiter w;
    engines[rank]->on_fault(page, need, &w);
    run();
    return w.done() ? w.status : 1;
  }
  std::vector<std::unique_ptr<FakeHost>> hosts;
  std::vector<std::unique_ptr<ProtocolEngine>> engines;
  std::deque<Msg> queue;
};

inline void FakeHost::send(Rank dst, MsgHeader header, Payload payload) {
  header.src = me;
  counters.messages_sent++;
  net->queue.push_back({dst, header, std::vector<std::byte>(payload.data, payload.data + payload.size)});
}

}  // namespace agora::testing_support
