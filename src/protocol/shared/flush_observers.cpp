#include "protocol/shared/flush_observers.h"

#include <cstring>
#include <map>
#include <memory>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/shared/page_diff.h"

namespace agora {

FlushObservers::FlushObservers(EngineHost &host, const EngineOptions &options)
    : host_(host),
      mode_(options.flush),
      skip_acks_(options.flush_skips_acks),
      skip_rounds_(options.flush_skips_rounds),
      skip_pending_refresh_(options.flush_skips_pending_refresh) {}

uint64_t FlushObservers::begin_flush(std::function<void()> done) {
  uint64_t token = next_token_++;
  flushes_[token].done = std::move(done);
  return token;
}

void FlushObservers::expect(uint64_t token) { flushes_.at(token).outstanding++; }

void FlushObservers::finish(uint64_t token) {
  auto it = flushes_.find(token);
  if (it == flushes_.end() || it->second.outstanding == 0)
    fatal("flush: a refresh for flush %llu that is not waiting for one", (unsigned long long)token);
  it->second.outstanding--;
  maybe_done(token);
}

void FlushObservers::refresh_requested(PageId page, uint64_t token) {
  subscribed_.insert(page);
  expect(token);
  pending_[page].requested++;
}

void FlushObservers::refresh_answered(PageId page, uint64_t token) {
  auto it = pending_.find(page);
  if (it == pending_.end() || it->second.requested == 0)
    fatal("flush: a refresh of page %llu that was not asked for", (unsigned long long)page);
  std::vector<uint64_t> released;
  if (--it->second.requested == 0) {
    released.swap(it->second.waiting);
    pending_.erase(it);
  }
  finish(token);
  for (uint64_t waiter : released) finish(waiter);
}

bool FlushObservers::wait_for_pending_refresh(PageId page, uint64_t token) {
  auto it = pending_.find(page);
  if (it == pending_.end() || skip_pending_refresh_) return false;
  expect(token);
  it->second.waiting.push_back(token);
  return true;
}

void FlushObservers::end_flush(uint64_t token) {
  flushes_.at(token).ended = true;
  maybe_done(token);
}

void FlushObservers::maybe_done(uint64_t token) {
  auto it = flushes_.find(token);
  if (!it->second.ended || it->second.outstanding) return;
  std::function<void()> done = std::move(it->second.done);
  flushes_.erase(it);
  done();
}

void FlushObservers::flush_atomically(std::vector<FlushPage> pages, Pass pass, std::function<bool(PageId)> valid_copy,
                                      std::function<void()> done) {
  run_round(std::make_shared<Round>(Round{std::move(pages), std::move(pass), std::move(valid_copy), std::move(done)}));
}

// r by value on purpose: the recursive call below passes the pointer a
// completion owns, which end_flush() may destroy while this call runs.
void FlushObservers::run_round(std::shared_ptr<Round> r) {  // NOLINT(performance-unnecessary-value-param)
  const uint64_t token = begin_flush([this, r] {
    std::vector<FlushPage> again;
    // One page alone is refreshed atomically by its home; the basic flush
    // refreshes every copy every time.
    if (r->pages.size() > 1 && observer_model() && !skip_rounds_ && ++r->round < kMaxRounds)
      for (FlushPage &f : r->pages)
        if (has_changes(f.page) && r->valid_copy(f.page)) again.push_back(std::move(f));
    if (again.empty()) {
      r->done();
      return;
    }
    host_.stats().flush_rounds_repeated++;
    r->pages = std::move(again);
    run_round(r);
  });
  r->pass(r->pages, token);
  end_flush(token);
}

void FlushObservers::observe(PageId page, Rank who) {
  Observed &o = homes_[page];
  if (o.snapshot.empty()) {
    const std::byte *f = host_.frame(page);
    o.snapshot.assign(f, f + host_.page_size());
  }
  o.observers.insert(who);
}

unsigned FlushObservers::notify(PageId page, Rank except) {
  auto it = homes_.find(page);
  if (it == homes_.end()) return 0;
  Observed &o = it->second;
  unsigned sent = 0;
  for (auto at = o.observers.begin(); at != o.observers.end();) {
    if (*at == except) {
      ++at;
      continue;
    }
    // The observer will refresh at its next flush, which makes it an
    // observer again: one notice between two refreshes is enough.
    host_.send_request(*at, {Channel::Protocol, kChangeNotice, 0, page, 0, 0});
    host_.stats().change_notices_sent++;
    ++sent;
    at = o.observers.erase(at);
  }
  o.acks += sent;
  return sent;
}

void FlushObservers::snapshot_apply(PageId page, const std::byte *diff, size_t size) {
  auto it = homes_.find(page);
  if (it == homes_.end() || it->second.snapshot.empty()) return;
  if (!page_diff_apply(it->second.snapshot.data(), host_.page_size(), diff, size))
    fatal("flush: malformed diff of page %llu", (unsigned long long)page);
}

bool FlushObservers::home_changed(PageId page, uint32_t offset, uint32_t length) {
  auto it = homes_.find(page);
  if (it == homes_.end()) return false;  // nobody observes it: nobody to tell
  std::byte *snap = it->second.snapshot.data() + offset;
  const std::byte *now = host_.frame(page) + offset;
  if (std::memcmp(snap, now, length) == 0) return false;
  std::memcpy(snap, now, length);
  return true;
}

void FlushObservers::flush_home_page(const FlushPage &f, uint64_t token) {
  bool changed = false;
  if (observer_model())
    for (auto [offset, length] : f.ranges) changed |= home_changed(f.page, offset, length);
  if (!changed) {
    host_.stats().flush_case4_home_unchanged++;
  } else {
    host_.stats().flush_case5_home_changed++;
    notify(f.page, host_.rank());
  }
  // The basic flush has nothing to do on a home page (Wong & Rendell).
  if (!observer_model()) return;
  expect(token);
  when_acknowledged(f.page, [this, token] { finish(token); });
}

void FlushObservers::when_acknowledged(PageId page, std::function<void()> fn) {
  auto it = homes_.find(page);
  if (skip_acks_ || it == homes_.end() || it->second.acks == 0) {
    fn();
    return;
  }
  it->second.waiting.push_back(std::move(fn));
}

void FlushObservers::when_all_acknowledged(const std::vector<PageId> &pages, std::function<void()> fn) {
  auto left = std::make_shared<size_t>(pages.size() + 1);
  auto shared = std::make_shared<std::function<void()>>(std::move(fn));
  auto one = [left, shared] {
    if (--*left == 0) (*shared)();
  };
  for (PageId page : pages) when_acknowledged(page, one);
  one();
}

void FlushObservers::observed_pages(std::vector<PageId> *out) const {
  for (const auto &[page, o] : homes_) out->push_back(page);
}

void FlushObservers::on_message(const MsgHeader &m, Payload p) {
  (void)p;
  const PageId page = m.a;
  switch (m.op) {
    case kChangeNotice:
      // has_changes = true: the next flush of the page refreshes it.
      subscribed_.erase(page);
      // The home may be computing: a flush there waits for this.
      host_.send_request(m.src, {Channel::Protocol, kNoticeAck, 0, page, 0, 0});
      break;
    case kNoticeAck: {
      host_.stats().notice_acks_received++;
      auto it = homes_.find(page);
      if (it == homes_.end() || it->second.acks == 0)
        fatal("flush: an unexpected change-notice acknowledgement for page %llu from rank %d", (unsigned long long)page,
              m.src);
      if (--it->second.acks) break;
      std::vector<std::function<void()>> ready;
      ready.swap(it->second.waiting);
      for (auto &fn : ready) fn();
      break;
    }
    default:
      fatal("flush: unknown op %u from rank %d", (unsigned)m.op, m.src);
  }
}

void FlushObservers::forget(PageId first, PageId count) {
  auto in_range = [&](PageId p) { return p - first < count; };
  for (auto it = subscribed_.begin(); it != subscribed_.end();)
    it = in_range(*it) ? subscribed_.erase(it) : std::next(it);
  std::vector<std::function<void()>> ready;
  for (auto it = homes_.begin(); it != homes_.end();) {
    if (!in_range(it->first)) {
      ++it;
      continue;
    }
    // Flushes waiting on notices about a freed page end now (nothing to see).
    for (auto &fn : it->second.waiting) ready.push_back(std::move(fn));
    it = homes_.erase(it);
  }
  for (auto &fn : ready) fn();
}

void flush_region_diff(const std::byte *page, const std::byte *twin, uint32_t offset, uint32_t length,
                       std::vector<std::byte> *out) {
  uint32_t at = offset;
  const uint32_t end = offset + length;
  while (at < end) {
    if (page[at] == twin[at]) {
      ++at;
      continue;
    }
    uint32_t start = at;
    while (at < end && page[at] != twin[at] && at - start < 0xffff) ++at;
    uint16_t off = (uint16_t)start, len = (uint16_t)(at - start);
    size_t o = out->size();
    out->resize(o + 4 + len);
    std::memcpy(out->data() + o, &off, 2);
    std::memcpy(out->data() + o + 2, &len, 2);
    std::memcpy(out->data() + o + 4, page + start, len);
  }
}

std::vector<FlushPage> flush_pages(const std::vector<StoreRange> &ranges) {
  std::map<PageId, FlushPage> by_page;
  for (const StoreRange &r : ranges) {
    FlushPage &f = by_page[r.page];
    f.page = r.page;
    f.ranges.push_back({r.offset, r.length});
  }
  std::vector<FlushPage> out;
  out.reserve(by_page.size());
  for (auto &[page, f] : by_page) out.push_back(std::move(f));
  return out;
}

}  // namespace agora
