// Home-based lazy release consistency (paper 001, after Iftode's HLRC).
//
// Every page has a home that holds its newest version. Other ranks cache
// copies, valid until a write notice names the page. Writes are found by
// write protection: the first write of an interval to a cached page takes a
// twin; when the interval ends, the page is diffed against its twin and the
// diff goes to the home, which acknowledges it. An interval's notices are
// published (handed to an acquirer, or to everyone at a barrier) only after
// all its diffs are acknowledged, so a page fetched after seeing a notice
// already holds the write it announces. Page replies carry the home's
// per-creator version of the page; a reply older than the versions the
// notices require, or a duplicate, is dropped (the request is resent).
//
// A home's own writes need no diff, and need no notice either while no other
// rank holds a copy: home pages are write-tracked only once another rank
// has fetched them, so owner-computes codes pay nothing for their own pages.
//
// Intervals are per rank, shared by all its threads (paper 001 §4.2). They
// end when lock ownership passes to another rank, at barriers and at thread
// create/exit (lazy policy), or additionally at every lock acquire
// (aggressive policy). Under the lazy policy a notice can name a page this
// rank has dirty: it is invalidated but keeps its twin, and when refetched
// its local changes are diffed against the twin and re-applied to the new
// copy (2-way diffing), so no local thread's write is lost.
#pragma once
#include <map>
#include <unordered_map>
#include <vector>

#include "protocol/engine.h"
#include "protocol/shared/page_copies.h"
#include "protocol/shared/write_notices.h"

namespace agora {

class HlrcEngine final : public ProtocolEngine {
 public:
  HlrcEngine(EngineHost &host, const EngineOptions &options);
  const char *name() const override { return "hlrc"; }
  void on_fault(PageId page, Access need, Waiter *w) override;
  void on_message(const MsgHeader &m, Payload p) override;
  Access local_access(PageId page) const override;
  // Home pages start writable: a page no other rank has a copy of needs no
  // write notices (see cached_elsewhere).
  Access home_access() const override { return Access::Write; }

  bool carries_consistency() const override { return true; }
  void release(std::function<void()> published) override;
  void acquirer_view(std::vector<std::byte> *out) override;
  void release_info(Payload view, std::vector<std::byte> *out) override;
  void acquire(Payload info) override;
  void barrier_arrive(uint64_t epoch, std::function<void()> published) override;
  void barrier_info(uint64_t epoch, std::vector<std::byte> *out) override;
  void barrier_receive(uint64_t epoch, Payload info) override;
  void barrier_complete(uint64_t epoch) override;
  void forget_pages(PageId first, PageId count, std::vector<uint32_t> *floor) override;
  void raise_page_floor(const std::vector<uint32_t> &floor) override;

  enum Op : uint16_t {
    kFetch = 1,  // requester -> home: a = page
    kPage,       // home -> requester: a = page; payload = version[n] (u32) + page
    kNack,       // home -> requester: a = page, b = status (not allocated)
    kDiffs,      // writer -> home: a = interval; payload = {u64 page, u32 size, diff}*
    kDiffsAck,   // home -> writer: a = interval
  };

 private:
  // Home pages get no twin: the home's copy is the reference. A home page
  // is write-tracked (and its writes produce notices) once cached elsewhere.
  struct PageState : PageCopy {
    VectorTime need;     // cached pages: versions the notices seen require
    VectorTime version;  // home pages: diffs applied, per creator
  };
  bool is_home(PageId page) const { return host_.home_of(page) == host_.rank(); }
  PageState &state(PageId page);

  // ---- faults and page copies (hlrc_pages.cpp) ----
  void fetch(PageId page, PageState &s);
  void on_page(const MsgHeader &m, Payload p);
  void invalidate(PageId page, Rank creator, uint32_t index);

  // ---- home side (hlrc_home.cpp) ----
  void home_serve(const MsgHeader &m);
  void home_apply_diffs(const MsgHeader &m, Payload p);

  // ---- intervals (hlrc_intervals.cpp) ----
  void close_interval();
  void on_diffs_ack();
  void note_notices_kept();  // stats: the most intervals held at once
  void when_published(std::function<void()> fn);
  void merge(Payload bundle, const char *what);

  EngineHost &host_;
  EngineOptions options_;
  std::unordered_map<PageId, PageState> pages_;
  std::vector<PageId> dirty_;  // pages written in the open interval
  WriteNotices notices_;
  unsigned acks_outstanding_ = 0;
  std::vector<std::function<void()>> on_published_;
  std::map<uint64_t, VectorTime> barrier_arrivals_;  // epoch -> max vector time at arrival
  VectorTime previous_barrier_;  // everyone has seen this much once the next barrier is entered
  // Versions a page newly homed here starts from: at least those of every
  // freed page, so that a write notice about freed memory (still travelling
  // with sync operations) never makes a fetch of its reused pages wait for
  // a diff that will not come.
  VectorTime page_floor_;
};

}  // namespace agora
