// Sequential consistency: home-based directory MSI at page granularity
// (paper 003's protocol, with pages as blocks).
//
// Every page has one home, which keeps its directory entry: either one owner
// holding the only (writable) copy, or a copyset of readers. The home is the
// serialisation point: it handles one transaction per page at a time (busy
// entry, later requests queued in arrival order) and grants write access only
// after every other copy is invalidated and acknowledged. A page starts owned
// by its home, writable there. Messages between two ranks arrive in order;
// between different pairs in any order.
#pragma once
#include <deque>
#include <unordered_map>
#include <vector>

#include "protocol/engine.h"

namespace agora {

class ScEngine final : public ProtocolEngine {
 public:
  explicit ScEngine(EngineHost &host) : host_(host) {}
  const char *name() const override { return "sc"; }
  void on_fault(PageId page, Access need, Waiter *w) override;
  void on_message(const MsgHeader &m, Payload p) override;
  Access local_access(PageId page) const override;
  void forget_pages(PageId first, PageId count, std::vector<uint32_t> *floor) override;

  enum Op : uint16_t {
    kReadRequest = 1,   // requester -> home
    kWriteRequest,      // requester -> home
    kInvalidate,        // home -> reader
    kInvalidateAck,     // reader -> home
    kFetch,             // home -> owner; b = access the owner keeps (read or none)
    kFetchData,         // owner -> home, payload = page
    kGrant,             // home -> requester; b = access granted, c = 1 if payload is the page
    kNack,              // home -> requester; b = status (page not allocated)
  };

 private:
  // ---- requester side (sc_requester.cpp) ----
  struct Pending {
    std::vector<Waiter *> waiters;
  };
  void set_local(PageId page, Access a);
  void complete_local(PageId page, Access granted, Payload data);
  void fail_local(PageId page, int status);
  void on_invalidate(const MsgHeader &m);
  void on_fetch(const MsgHeader &m);

  // ---- home side (sc_directory.cpp) ----
  struct Request {
    Rank requester;
    Access mode;
  };
  struct DirEntry {
    Rank owner;                  // >= 0: exclusive owner; -1: shared by copyset
    std::vector<bool> copyset;   // readers, when owner < 0
    bool busy = false;
    Request current{};           // transaction in progress when busy
    Rank fetched_from = -1;      // owner being fetched from
    unsigned acks_left = 0;
    bool requester_had_copy = false;
    std::deque<Request> queue;   // waiting transactions, FIFO
  };
  DirEntry &entry(PageId page);
  void home_request(PageId page, Request r);
  void home_start(PageId page, DirEntry &e, Request r);
  void home_finish(PageId page, DirEntry &e);
  void home_drain(PageId page, DirEntry &e);  // start queued transactions
  void home_on_fetch_data(PageId page, Payload p);
  void home_on_ack(PageId page);
  void grant(PageId page, Rank to, Access a, bool with_data);
  // Invariants of an entry (sc_checks.cpp), for AGORA_ASSERT.
  bool entry_consistent(PageId page, const DirEntry &e) const;

  EngineHost &host_;
  std::unordered_map<PageId, Access> access_;    // pages whose access differs from the initial one
  std::unordered_map<PageId, Pending> pending_;  // pages with a request in flight
  std::unordered_map<PageId, DirEntry> directory_;
};

}  // namespace agora
