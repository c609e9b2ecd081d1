// Intervals of regc and where their entries go: broadcast before a span
// (rule 1), a lock's log (rule 2), barriers (rule 3).
#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/regc/regc_engine.h"
#include "protocol/shared/page_copy_checks.h"
#include "protocol/shared/page_diff.h"

namespace agora {

namespace {
// True if every run of an encoded diff lies inside bytes the thread was
// traced storing: then the diff is that span's stores and nobody else's.
bool diff_within(const std::vector<std::byte> &diff, const std::vector<StoreRange> &stores, PageId page,
                 size_t page_size) {
  bool all_inside = true;
  bool ok = page_diff_for_each_run(page_size, diff.data(), diff.size(), [&](size_t off, const std::byte *, size_t len) {
    bool inside = false;
    for (const StoreRange &r : stores) inside |= r.page == page && r.offset <= off && off + len <= r.offset + r.length;
    all_inside &= inside;
  });
  return ok && all_inside;
}
}  // namespace

std::vector<RegcEngine::Closed> RegcEngine::close_interval(Closing why, const std::vector<StoreRange> *stores) {
  std::vector<Closed> made;
  collect_home_writes();  // home pages the host saw written (regc_home_writes.cpp)
  if (dirty_.empty()) return made;
  const size_t size = host_.page_size();
  std::map<Rank, std::vector<std::byte>> to_home;
  std::map<Rank, std::vector<RegcEntryRef>> awaiting;
  // Protect before diffing: a later write by any thread faults and starts
  // the next interval's twin. All pages at once, in runs (a sweep's pages
  // are consecutive), before any diff is taken.
  AccessRuns protect;
  for (PageId page : dirty_) {
    PageState &s = state(page);
    // (A home page whose writes the host tracks stays writable: the host
    // reports its next write. It has no twin, so its entry is a notice.)
    if ((s.dirty || s.written_back) && s.access == Access::Write && !s.writes_tracked) {
      s.access = Access::Read;
      protect.add(page, Access::Read);
    }
  }
  protect.apply(host_);
  for (PageId page : dirty_) {
    PageState &s = state(page);
    if (!s.dirty && !s.written_back) continue;  // listed again (evicted, then written again): done
    // Fetched along for a write sweep and not written: nothing to announce.
    if (page_copy_unchanged(host_, page, s) && !s.written_back) continue;
    // Evicted in this interval (regc_evict.cpp): some of its writes went
    // home by write-back, so no diff taken here is the whole change from
    // the previous version: the entry is a notice, never an update. An
    // evicted copy not written again has no twin: an empty diff, which
    // numbers the version.
    const bool written_back = s.written_back;
    s.written_back = false;
    s.dirty = false;
    auto e = std::make_shared<RegcEntry>();
    e->page = page;
    e->phase = phase_;
    std::vector<std::byte> diff;
    // Whether the diff is the page's whole change since its last version:
    // not after a write-back, not for a home page served meanwhile with
    // writes not in the diff's base (served_unpublished), not for a tracked
    // home page without a standing twin (regc_home_writes.cpp).
    bool exact = !written_back;
    if (!s.twin.empty()) {
      page_diff_encode(host_.frame(page), s.twin.data(), size, &diff);
      exact &= !s.served_unpublished;
      s.served_unpublished = false;
    } else if (s.writes_tracked) {
      exact &= diff_home_written(page, s, &diff);
    }
    s.twin.clear();
    s.twin.shrink_to_fit();
    AGORA_ASSERT(page_copy_consistent(host_, page, s, fine_grain()));
    // Under regc a span's diffs travel as updates, and so do small ordinary
    // ones. An update is always the whole diff: a copy patched with it is
    // then exactly the home's version it names.
    if (fine_grain() && exact && (why == Closing::SpanEnd || diff.size() <= kOrdinaryUpdateMax)) e->update = diff;
    const bool span_only =
        why == Closing::SpanEnd && stores && !written_back && !diff.empty() && diff_within(diff, *stores, page, size);
    if (is_home(page)) {
      if (!s.cached_elsewhere) continue;  // nobody holds a copy: nothing to tell
      e->version = ++s.version;
    } else {
      diff_batch_append(&to_home[host_.home_of(page)], page, diff);
      host_.stats().diffs_sent++;
      host_.stats().diff_bytes += diff.size();
      if (s.fetching) s.refetch = true;  // a reply in flight predates this diff
      s.diffs_in_flight++;
      s.own_ahead = true;
      awaiting[host_.home_of(page)].push_back(e);
    }
    made.push_back({e, span_only});
  }
  for (auto &[home, buf] : to_home) {
    uint64_t batch = next_batch_++;
    unacknowledged_[batch] = std::move(awaiting[home]);
    host_.send_request(home, {Channel::Protocol, kDiffs, 0, batch, 0, 0}, {buf.data(), buf.size()});
  }
  dirty_.clear();
  host_.stats().intervals++;
  return made;
}

void RegcEngine::record(const std::vector<Closed> &made, Closing why) {
  // Without tracing, write protection sees pages, not threads: while other
  // application threads run here, some of these stores may be theirs and
  // ordinary, so rule 1 wants them broadcast too.
  const bool others_may_store = !host_.sole_application_thread();
  threaded_ |= others_may_store;
  for (const Closed &c : made) {
    since_barrier_.add(c.entry);
    for (auto &[lock, log] : open_spans_) log.add(c.entry);
    if (why == Closing::Ordinary || (others_may_store && !c.span_only)) unbroadcast_.add(c.entry);
  }
}

void RegcEngine::on_diffs_ack(const MsgHeader &m, Payload p) {
  auto it = unacknowledged_.find(m.a);
  if (it == unacknowledged_.end() || p.size != 8 * it->second.size())
    fatal("%s: unexpected diff acknowledgement from rank %d", name(), m.src);
  for (size_t i = 0; i < it->second.size(); ++i) {
    RegcEntry &e = *it->second[i];
    std::memcpy(&e.version, p.data + 8 * i, 8);
    // This copy holds the writes it sent: if it was the home's previous
    // version, it is now this one; if not, it is ahead of its version.
    auto ps = pages_.find(e.page);
    if (ps != pages_.end()) {
      PageState &s = ps->second;
      if (s.diffs_in_flight) s.diffs_in_flight--;
      if (s.access != Access::None && s.version + 1 == e.version) {
        s.version = e.version;
        if (s.diffs_in_flight == 0) s.own_ahead = false;
      }
    }
  }
  unacknowledged_.erase(it);
  run_acknowledged();
}

void RegcEngine::run_acknowledged() {
  if (!unacknowledged_.empty() || writebacks_outstanding_ > 0) return;
  std::vector<std::function<void()>> ready;
  ready.swap(on_acknowledged_);
  for (auto &fn : ready) fn();
}

void RegcEngine::when_acknowledged(std::function<void()> fn) {
  if (unacknowledged_.empty() && writebacks_outstanding_ == 0)
    fn();
  else
    on_acknowledged_.push_back(std::move(fn));
}

void RegcEngine::broadcast_then(std::function<void()> fn) {
  // Entries already numbered leave now; the others once their homes have
  // numbered them (a receiver needs the version). fn runs when every rank
  // has applied both.
  send_unbroadcast(/*numbered_only=*/true);
  when_acknowledged([this, fn = std::move(fn)] {
    send_unbroadcast(/*numbered_only=*/false);
    // Acknowledgements come back in order, so once none is outstanding
    // every broadcast sent so far (this one included) has been applied.
    if (broadcast_acks_outstanding_ == 0)
      fn();
    else
      on_broadcast_.push_back(fn);
  });
}

void RegcEngine::send_unbroadcast(bool numbered_only) {
  if (unbroadcast_.empty() || options_.mutation == EngineOptions::Mutation::RegcSkipRule1) return;
  std::vector<RegcEntryRef> going;
  RegcLog waiting;
  for (const auto &e : unbroadcast_.entries()) {
    if (numbered_only && e->version == 0)
      waiting.add(e);
    else
      going.push_back(e);
  }
  unbroadcast_.clear();
  unbroadcast_.add_all(waiting);
  for (const auto &e : going) e->broadcast = true;  // barriers need not carry them
  // A page's home has every numbered entry of it applied (numbering is
  // applying), so its rank is not told again; a rank left with nothing to
  // be told gets no message.
  const bool own_homes_only = options_.mutation == EngineOptions::Mutation::RegcBroadcastOwnHomesOnly;
  for (Rank r = 0; r < host_.nranks(); ++r) {
    if (r == host_.rank()) continue;
    RegcLog to_r;
    for (const auto &e : going) {
      const Rank home = host_.home_of(e->page);
      const bool applied_at_r = e->version != 0 && (own_homes_only ? home != host_.rank() : home == r);
      if (!applied_at_r) to_r.add(e);
    }
    if (to_r.empty()) continue;
    std::vector<std::byte> buf;
    to_r.encode(&buf);
    host_.send_request(r, {Channel::Protocol, kEntries, 0, 0, 0, 0}, {buf.data(), buf.size()});
    ++broadcast_acks_outstanding_;
  }
}

void RegcEngine::on_entries(const MsgHeader &m, Payload p) {
  std::vector<RegcEntryRef> entries;
  if (!RegcLog::decode(p, &entries)) fatal("%s: malformed entries from rank %d", name(), m.src);
  apply_all(std::move(entries));
  host_.send(m.src, {Channel::Protocol, kEntriesAck, 0, 0, 0, 0});
}

void RegcEngine::on_entries_ack() {
  if (broadcast_acks_outstanding_ == 0) fatal("%s: unexpected broadcast acknowledgement", name());
  if (--broadcast_acks_outstanding_ > 0) return;
  std::vector<std::function<void()>> ready;
  ready.swap(on_broadcast_);
  for (auto &fn : ready) fn();
}

// ---- sync hooks -------------------------------------------------------------

void RegcEngine::release(std::function<void()> published) {
  record(close_interval(Closing::Ordinary, nullptr), Closing::Ordinary);
  add_spans_to_release();
  broadcast_then(std::move(published));
}

// A thread-sync release (a thread barrier's arrival, thread create or exit,
// a semaphore post, a condition's wait or signal) orders everything before
// it for whoever acquires after it, as in pthreads, and that acquire takes
// nothing from it but the broadcast: so the broadcast carries span stores
// too, not only ordinary ones (rule 3 for thread barriers). Those this rank
// made since the last barrier, and those it learned from lock logs
// (happens-before is transitive: a thread that took a lock and then posts
// passes on what the lock brought). Without this a rank that kept a copy
// read a lock-protected store made before a thread barrier as stale after
// it (SPLASH-3 FMM, issue 29).
void RegcEngine::add_spans_to_release() {
  if (options_.mutation == EngineOptions::Mutation::RegcReleaseSkipsSpans) return;
  for (const auto &e : since_barrier_.entries())
    if (!e->broadcast) unbroadcast_.add(e);
  for (const auto &e : relayed_.entries()) {
    uint64_t &sent = relayed_version_[e->page];
    sent = std::max(sent, e->version);
    unbroadcast_.add(e);
  }
  relayed_.clear();
}

void RegcEngine::acquire(Payload info) {
  (void)info;  // the releaser broadcast its entries: they are here
  settle_early_updates();
}

// The lock request leaves at once (LockService); the span starts when it is
// granted *and* this has called `ready`: every rank has applied this rank's
// ordinary entries (rule 1 is about when a span starts, not when its
// request leaves). The lock's log is applied, and missing updates settled,
// at that start (lock_acquire), not at the grant: what comes between the
// two belongs to spans that started before this one.
void RegcEngine::span_begin(uint64_t lock, std::function<void()> ready) {
  (void)lock;
  record(close_interval(Closing::Ordinary, nullptr), Closing::Ordinary);
  if (options_.mutation == EngineOptions::Mutation::RegcSpanStartsAtGrant) {
    broadcast_then([] {});
    ready();
    return;
  }
  broadcast_then(std::move(ready));
}

void RegcEngine::lock_acquire(uint64_t lock, Payload info) {
  if (info.size) {
    std::vector<RegcEntryRef> entries;
    if (!RegcLog::decode(info, &entries))
      fatal("%s: malformed lock log of lock %llu", name(), (unsigned long long)lock);
    RegcLog &log = lock_logs_[lock];
    log.clear();  // the log that came with the lock is the whole of it
    for (const auto &e : entries) {
      log.add(e);
      auto sent = relayed_version_.find(e->page);
      if (sent == relayed_version_.end() || e->version > sent->second) relayed_.add(e);
    }
    apply_all(std::move(entries));
  }
  settle_early_updates();  // the span starts now
  open_spans_[lock].clear();
}

void RegcEngine::span_end(uint64_t lock, const std::vector<StoreRange> *stores) {
  record(close_interval(Closing::SpanEnd, stores), Closing::SpanEnd);
  auto it = open_spans_.find(lock);
  if (it == open_spans_.end()) return;
  if (options_.mutation != EngineOptions::Mutation::RegcSkipSpanLog) lock_logs_[lock].add_all(it->second);
  open_spans_.erase(it);
}

void RegcEngine::lock_release(uint64_t lock, std::function<void()> published) {
  (void)lock;
  when_acknowledged(std::move(published));  // the log's versions are known
}

void RegcEngine::lock_release_info(uint64_t lock, Payload view, std::vector<std::byte> *out) {
  (void)view;
  auto it = lock_logs_.find(lock);
  if (it == lock_logs_.end()) {
    RegcLog().encode(out);
    return;
  }
  it->second.encode(out);
  lock_logs_.erase(it);  // it travels with the lock
}

void RegcEngine::barrier_arrive(uint64_t epoch, std::function<void()> published) {
  record(close_interval(Closing::Barrier, nullptr), Closing::Barrier);
  if (threaded_ || !host_.sole_application_thread()) threaded_phases_.insert(epoch);
  threaded_ = false;
  when_acknowledged([this, epoch, published = std::move(published)] {
    // This barrier delivers them, but for those a broadcast already did
    // (it left before this rank's barrier messages, so it arrives first).
    for (const auto &e : since_barrier_.entries())
      if (!e->broadcast) barrier_sets_[epoch].add(e);
    since_barrier_.clear();
    published();
  });
}

void RegcEngine::barrier_info(uint64_t epoch, std::vector<std::byte> *out) {
  // First whether any rank heard of ran several application threads in this
  // phase (then entries are kept one barrier longer), then the entries.
  out->push_back(std::byte{(uint8_t)(threaded_phases_.count(epoch) ? 1 : 0)});
  barrier_sets_[epoch].encode(out);
}

void RegcEngine::barrier_receive(uint64_t epoch, Payload info) {
  std::vector<RegcEntryRef> entries;
  if (info.size < 1 || !RegcLog::decode({info.data + 1, info.size - 1}, &entries))
    fatal("%s: malformed barrier message", name());
  if (info.data[0] != std::byte{0}) threaded_phases_.insert(epoch);
  RegcLog &set = barrier_sets_[epoch];
  for (const auto &e : entries) set.add(e);
}

void RegcEngine::barrier_complete(uint64_t epoch) {
  auto it = barrier_sets_.find(epoch);
  if (it != barrier_sets_.end()) {
    apply_all(it->second.entries());
    barrier_sets_.erase(barrier_sets_.begin(), std::next(it));
  }
  settle_early_updates();
  // Entries everyone has applied can go. Every rank has now entered this
  // barrier. If each ran one application thread in the phase it ends, no
  // rank can start a span before applying this barrier's entries, which are
  // all entries made before it. Otherwise a thread may have kept running
  // (and storing) while its rank was in the barrier, and only entries made
  // before the previous barrier are surely everywhere.
  ++phase_;
  const bool threaded = threaded_phases_.count(epoch) > 0;
  threaded_phases_.erase(threaded_phases_.begin(), threaded_phases_.upper_bound(epoch));
  const uint32_t applied_everywhere = threaded ? (phase_ >= 2 ? phase_ - 2 : 0) : phase_;
  unbroadcast_.drop_before_phase(applied_everywhere);
  relayed_.drop_before_phase(applied_everywhere);
  for (auto &[lock, log] : lock_logs_) log.drop_before_phase(applied_everywhere);
  for (auto &[lock, log] : open_spans_) log.drop_before_phase(applied_everywhere);
}

}  // namespace agora
