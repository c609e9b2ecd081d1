// Sequential consistency: home-based directory MSI at page granularity
// (SWCC Split-C's protocol, with pages as blocks).
//
// Every page has one home, which keeps its directory entry: either one owner
// holding the only (writable) copy, or a copyset of readers. The home is the
// serialisation point: it handles one transaction per page at a time (busy
// entry, later requests queued in arrival order) and grants write access only
// after every other copy is invalidated and acknowledged. A page starts owned
// by its home, writable there. Messages between two ranks arrive in order;
// between different pairs in any order.
//
// Sequential misses are cheaper (docs/sc.md): a read miss may ask for the
// pages after it (prefetch), and a write that takes pages other ranks read
// may take the following pages in the same state with it (a run: one
// invalidation and one acknowledgement per reader for all of them).
#pragma once
#include <deque>
#include <unordered_map>
#include <vector>

#include "protocol/engine.h"
#include "protocol/sc/sc_miss_stream.h"

namespace agora {

class ScEngine final : public ProtocolEngine {
 public:
  ScEngine(EngineHost &host, const EngineOptions &options);
  const char *name() const override { return "sc"; }
  void on_fault(PageId page, Access need, Waiter *w) override;
  void on_message(const MsgHeader &m, Payload p) override;
  Access local_access(PageId page) const override;
  void forget_pages(PageId first, PageId count, std::vector<uint32_t> *floor) override;
  Eviction evict(PageId page) override;
  bool reclaim_home(PageId page) override;
  bool reclaims_home() const override { return true; }

  enum Op : uint16_t {
    kReadRequest = 1,   // requester -> home; b = pages after a wanted too (prefetch),
                        //   c = requester's forget epoch (echoed in the reply)
    kWriteRequest,      // requester -> home; b = pages after a to take too (a run),
                        //   c = epoch << 1 | 1 if the requester holds a read copy of them all
    kInvalidate,        // home -> reader
    kInvalidateAck,     // reader -> home
    kFetch,             // home -> owner; b = access the owner keeps (read or none)
    kFetchData,         // owner -> home, payload = page
    kGrant,             // home -> requester; b = access granted, c = 1 if payload is the page
    kNack,              // home -> requester; b = status (page not allocated)
    kReadGrantRun,      // home -> requester: read copies of pages [a, a+b), payload = them;
                        //   a is the page asked for, the rest prefetched; c = echoed epoch
    kPrefetchGrant,     // home -> requester: read copies of prefetched pages [a, a+b),
                        //   payload = them (the page asked for waits at the home); c = epoch
    kInvalidateRun,     // home -> reader: drop copies of pages [a, a+b)
    kInvalidateRunAck,  // reader -> home: pages [a, a+b) dropped
    kGrantWriteRun,     // home -> requester: write access to [a, a+b), which it holds
                        //   copies of (no payload); c = echoed epoch
    kWriteBack,         // owner -> home: evicting its (only, writable) copy; payload = page
    kWriteBackAck,      // home -> former owner: a = page
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
  // Extra pages for a request of `need` on `page` homed at `home`: the
  // contiguous pages after it this rank may ask for (sc_prefetch.cpp).
  PageId extra_pages(PageId page, Rank home, Access need);
  // Prefetched pages [first, first+count) arrived (data: count pages);
  // epoch: this rank's forget epoch when it asked.
  void install_prefetched(PageId first, PageId count, const std::byte *data, uint64_t epoch);
  // Write access to the run's pages after its first arrived (sc_batch.cpp).
  void install_write_run(PageId first, PageId count, uint64_t epoch);
  void on_invalidate_run(const MsgHeader &m);

  // ---- the bounded cache (sc_evict.cpp) ----
  // An owner's copy on its way home: the page as evicted (served to a fetch
  // of the home that crosses the write-back) and the threads waiting to
  // touch it again.
  struct WriteBack {
    std::vector<std::byte> page;
    std::vector<Waiter *> waiters;
  };
  void home_on_writeback(PageId page, Rank from, Payload p);
  void on_writeback_ack(PageId page);
  // A write request for `page` also asked for the `extra` read copies after
  // it as a run: the home will upgrade them without sending them, so they
  // must not be evicted until the request is answered.
  void mark_run(PageId page, PageId extra);
  void unmark_run(PageId page);

  // ---- home side (sc_directory.cpp) ----
  struct Request {
    Rank requester;
    Access mode;
    bool holds_copy = false;  // writes: the requester still holds a read copy
  };
  struct DirEntry {
    Rank owner;                 // >= 0: exclusive owner; -1: shared by copyset
    std::vector<bool> copyset;  // readers, when owner < 0
    bool busy = false;
    Request current{};       // transaction in progress when busy
    Rank fetched_from = -1;  // owner being fetched from
    unsigned acks_left = 0;
    bool requester_had_copy = false;
    // A run (sc_batch.cpp): the first page's entry leads it (run_pages > 1,
    // counts the acks for all); the others are busy with run_leader set.
    PageId run_pages = 1;
    PageId run_leader = ~PageId(0);
    uint64_t run_epoch = 0;     // the requester's epoch, echoed in the grant
    std::deque<Request> queue;  // waiting transactions, FIFO
  };
  DirEntry &entry(PageId page);
  void home_request(PageId page, Request r);
  void home_start(PageId page, DirEntry &e, Request r);
  void home_finish(PageId page, DirEntry &e);
  void home_drain(PageId page, DirEntry &e);  // start queued transactions
  void home_on_fetch_data(PageId page, Payload p);
  void home_on_ack(PageId page);
  void grant(PageId page, Rank to, Access a, bool with_data);
  // ---- prefetch at the home (sc_prefetch.cpp) ----
  // A remote read request for `page` wanting `extra` pages after it.
  void home_read_request(PageId page, Rank requester, PageId extra, uint64_t epoch);
  // Whether prefetched page q may be granted to `requester` now, and doing so.
  bool prefetchable(PageId q, Rank requester);
  void share_with(PageId page, DirEntry &e, Rank requester);
  // Sends pages [first, first+count) from the home's frames as one payload.
  void send_pages(Rank to, MsgHeader m, PageId first, PageId count);
  // ---- batched writes at the home (sc_batch.cpp) ----
  // A write request for `page` that may take `extra` pages after it.
  void home_write_request(PageId page, Request r, PageId extra, uint64_t epoch);
  // Pages after `page` (up to extra) in exactly its state, idle.
  PageId run_length(PageId page, const DirEntry &e, PageId extra);
  void home_start_run(PageId page, DirEntry &e, Request r, PageId pages, uint64_t epoch);
  void home_finish_run(PageId page, DirEntry &e);
  void home_on_run_ack(PageId page);
  // The run led by `page` is being forgotten: free its other pages (their
  // readers drop their copies anyway; the write is never granted).
  void home_abandon_run(PageId page, DirEntry &e);
  // Invariants of an entry (sc_checks.cpp), for AGORA_ASSERT.
  bool entry_consistent(PageId page, const DirEntry &e) const;

  EngineHost &host_;
  const EngineOptions options_;
  // Sequential-miss detection per home, for reads and for writes.
  MissStreams read_streams_, write_streams_;
  // Bumped by every forget_pages: a reply to a request made before a forget
  // may name pages that were freed since, so its extra pages are dropped.
  uint64_t forget_epoch_ = 0;
  std::unordered_map<PageId, Access> access_;    // pages whose access differs from the initial one
  std::unordered_map<PageId, Pending> pending_;  // pages with a request in flight
  std::unordered_map<PageId, DirEntry> directory_;
  std::unordered_map<PageId, WriteBack> writing_back_;  // evicted owned copies not yet acknowledged
  std::unordered_map<PageId, PageId> run_asked_;        // write request's page -> extra pages it named
  std::unordered_map<PageId, unsigned> in_run_;         // pages named by write requests in flight
};

}  // namespace agora
