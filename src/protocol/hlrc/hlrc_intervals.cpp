// Intervals of hlrc: ending one (diffs to homes), publishing it once the
// homes have acknowledged, and applying the notices that sync operations
// bring in.
#include <algorithm>
#include <cstring>
#include <map>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/hlrc/hlrc_engine.h"
#include "protocol/shared/page_copy_checks.h"
#include "protocol/shared/page_diff.h"

namespace agora {

void HlrcEngine::close_interval() {
  collect_home_writes();  // tracked home pages written, newly shared ones
  if (dirty_.empty()) return;
  const uint32_t index = notices_.time()[host_.rank()] + 1;
  const size_t size = host_.page_size();
  std::map<Rank, std::vector<std::byte>> to_home;
  std::vector<PageId> closed;  // dirty_ without repeats (an evicted copy written again is listed twice)
  // Protect before diffing: a later write by any thread of this rank
  // faults and starts the next interval's twin. All at once, in runs (a
  // sweep's pages are consecutive), before any diff is taken. (A home page
  // whose writes the host tracks stays writable: the host reports the next
  // write.)
  AccessRuns protect;
  for (PageId page : dirty_) {
    PageState &s = state(page);
    if (s.dirty && s.access == Access::Write && !s.writes_tracked) {
      s.access = Access::Read;
      protect.add(page, Access::Read);
    }
  }
  protect.apply(host_);
  for (PageId page : dirty_) {
    PageState &s = state(page);
    if (!s.dirty && !s.written_back) continue;  // listed again: done
    // Fetched along for a write sweep and not written: nothing to announce.
    if (options_.hlrc_mutation == EngineOptions::HlrcMutation::WrittenAheadNotSent && s.written_ahead)
      std::memcpy(s.twin.data(), host_.frame(page), size);  // planted bug: its writes are taken as none
    if (page_copy_unchanged(host_, page, s) && !s.written_back) continue;
    closed.push_back(page);
    if (!s.dirty) {
      // Evicted: its writes went home with a write-back (hlrc_evict.cpp).
      // An empty diff numbers the version this interval's notice requires.
      s.written_back = false;
      diff_batch_append(&to_home[host_.home_of(page)], page, {});
      host_.stats().diffs_sent++;
      vector_time_raise(&s.need, host_.nranks(), host_.rank(), index);
      continue;
    }
    s.written_back = false;
    s.dirty = false;
    if (is_home(page)) {
      vector_time_raise(&s.version, host_.nranks(), host_.rank(), index);
      // Observers of the page (agora_flush) hear of the home's own writes;
      // the interval is published once they have (a release is a flush).
      if (flush_.home_changed(page, 0, (uint32_t)size) && flush_.notify(page, host_.rank())) {
        ++acks_outstanding_;
        flush_.when_acknowledged(page, [this] { on_diffs_ack(); });
      }
      continue;
    }
    // Sent even when empty (rewritten with the same values): the home's
    // version must reach this interval, which the notices will require.
    size_t n = diff_batch_encode(&to_home[host_.home_of(page)], page, host_.frame(page), s.twin.data(), size);
    host_.stats().diffs_sent++;
    host_.stats().diff_bytes += n;
    // A fetch still in flight was served before this diff reached the home:
    // its reply must not be installed over these writes.
    vector_time_raise(&s.need, host_.nranks(), host_.rank(), index);
    s.twin.clear();
    s.twin.shrink_to_fit();
    AGORA_ASSERT(page_copy_consistent(host_, page, s, false));
  }
  for (auto &[home, buf] : to_home) {
    host_.send_request(home, {Channel::Protocol, kDiffs, 0, index, 0, 0}, {buf.data(), buf.size()});
    ++acks_outstanding_;
  }
  notices_.add_own(closed);
  dirty_.clear();
  // One-sided readers of this home's pages need this interval's writes
  // (already in the frames) once its notices are out.
  vector_time_raise(&applied_, host_.nranks(), host_.rank(), index);
  publish_home_meta();
  host_.stats().intervals++;
  note_notices_kept();
}

void HlrcEngine::note_notices_kept() {
  uint64_t &peak = host_.stats().notices_kept_peak;
  peak = std::max<uint64_t>(peak, notices_.intervals_kept());
}

void HlrcEngine::on_diffs_ack() {
  if (acks_outstanding_ == 0) fatal("hlrc: unexpected diff acknowledgement");
  if (--acks_outstanding_ > 0 || writebacks_outstanding_ > 0) return;
  std::vector<std::function<void()>> ready;
  ready.swap(on_published_);
  for (auto &fn : ready) fn();
}

void HlrcEngine::when_published(std::function<void()> fn) {
  if (acks_outstanding_ == 0 && writebacks_outstanding_ == 0)
    fn();
  else
    on_published_.push_back(std::move(fn));
}

void HlrcEngine::release(std::function<void()> published) {
  close_interval();
  when_published(std::move(published));
}

void HlrcEngine::acquirer_view(std::vector<std::byte> *out) { notices_.encode_view(out); }

void HlrcEngine::release_info(Payload view, std::vector<std::byte> *out) { notices_.encode_bundle(view, out); }

void HlrcEngine::merge(Payload bundle, const char *what) {
  // One protection change per run of pages invalidated, all before the
  // acquire (lock grant or barrier) that brought them completes.
  AccessRuns runs;
  bool ok = notices_.merge_bundle(bundle, [&](Rank creator, uint32_t index, const PageId *pages, size_t n) {
    for (size_t i = 0; i < n; ++i) invalidate(pages[i], creator, index, &runs);
  });
  runs.apply(host_);
  if (!ok) fatal("hlrc: malformed or incomplete write notices in a %s", what);
  note_notices_kept();
}

void HlrcEngine::acquire(Payload info) {
  // Aggressive intervals end at every acquire, so no dirty page is ever
  // invalidated; lazy ones rely on 2-way diffing instead.
  if (options_.intervals == IntervalPolicy::Aggressive) close_interval();
  if (info.size) merge(info, "lock grant");
}

void HlrcEngine::barrier_arrive(uint64_t epoch, std::function<void()> published) {
  close_interval();
  when_published([this, epoch, published = std::move(published)] {
    VectorTime &a = barrier_arrivals_[epoch];
    const VectorTime &vt = notices_.time();
    for (Rank i = 0; i < host_.nranks(); ++i) vector_time_raise(&a, host_.nranks(), i, vt[i]);
    published();
  });
}

void HlrcEngine::barrier_info(uint64_t epoch, std::vector<std::byte> *out) {
  // The largest arrival time heard of, then the notices.
  vector_time_append(barrier_arrivals_[epoch], host_.nranks(), out);
  notices_.encode_bundle({}, out);
}

void HlrcEngine::barrier_receive(uint64_t epoch, Payload info) {
  const size_t vbytes = 4 * (size_t)host_.nranks();
  if (info.size < vbytes) fatal("hlrc: malformed barrier message");
  VectorTime heard = vector_time_read(info.data, host_.nranks());
  VectorTime &a = barrier_arrivals_[epoch];
  for (Rank i = 0; i < host_.nranks(); ++i) vector_time_raise(&a, host_.nranks(), i, heard[i]);
  merging_barrier_ = true;
  merge({info.data + vbytes, info.size - vbytes}, "barrier message");
  merging_barrier_ = false;
}

void HlrcEngine::barrier_complete(uint64_t epoch) {
  // Every rank has entered this barrier, so every rank has completed the
  // previous one and seen everything published before it: those notices are
  // garbage everywhere.
  notices_.raise_all(previous_barrier_);
  previous_barrier_ = barrier_arrivals_[epoch];
  barrier_arrivals_.erase(barrier_arrivals_.begin(), barrier_arrivals_.upper_bound(epoch));
  refresh_hot_pages();
}

}  // namespace agora
