// Requester side of hlrc: access faults, twins, page fetches and installs.
#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "protocol/hlrc/hlrc_engine.h"
#include "protocol/shared/page_diff.h"

namespace agora {

HlrcEngine::HlrcEngine(EngineHost &host, const EngineOptions &options)
    : host_(host),
      options_(options),
      notices_(host.rank(), host.nranks()),
      previous_barrier_(host.nranks(), 0) {
  if (host.page_size() > 32768) fatal("hlrc: page size %zu exceeds 32 KiB", host.page_size());
}

HlrcEngine::PageState &HlrcEngine::state(PageId page) {
  auto it = pages_.find(page);
  if (it != pages_.end()) return it->second;
  PageState &s = pages_[page];
  s.access = is_home(page) ? Access::Write : Access::None;
  if (is_home(page)) s.version = page_floor_;
  return s;
}

Access HlrcEngine::local_access(PageId page) const {
  auto it = pages_.find(page);
  if (it != pages_.end()) return it->second.access;
  return host_.home_of(page) == host_.rank() ? Access::Write : Access::None;
}

void HlrcEngine::on_fault(PageId page, Access need, Waiter *w) {
  PageState &s = state(page);
  if (is_home(page) && !host_.page_allocated(page)) {
    w->complete(-5);
    return;
  }
  if (s.access == Access::None) {  // cached page, invalid: fetch it, then retry
    s.waiters.push_back(w);
    s.want_write |= need == Access::Write;
    if (!s.fetching) fetch(page, s);
    return;
  }
  if (need == Access::Write && s.access == Access::Read) make_dirty(page, s);
  w->complete(0);  // else another thread of this rank already resolved it
}

void HlrcEngine::make_dirty(PageId page, PageState &s) {
  if (!s.dirty) {
    s.dirty = true;
    dirty_.push_back(page);
    if (!is_home(page)) {  // the home's copy is the reference: no twin
      const std::byte *f = host_.frame(page);
      s.twin.assign(f, f + host_.page_size());
      host_.stats().twins++;
    }
  }
  s.access = Access::Write;
  host_.set_access(page, Access::Write);
}

void HlrcEngine::fetch(PageId page, PageState &s) {
  s.fetching = true;
  host_.send_request(host_.home_of(page), {Channel::Protocol, kFetch, 0, page, 0, 0});
}

void HlrcEngine::on_page(const MsgHeader &m, Payload p) {
  PageId page = m.a;
  PageState &s = state(page);
  const size_t vbytes = 4 * (size_t)host_.nranks();
  if (p.size != vbytes + host_.page_size()) fatal("hlrc: malformed page reply from rank %d", m.src);
  if (!s.fetching || s.access != Access::None) {  // a duplicate: already installed
    host_.stats().stale_replies++;
    return;
  }
  if (!s.need.empty()) {
    VectorTime version = vector_time_read(p.data, host_.nranks());
    for (Rank i = 0; i < host_.nranks(); ++i)
      if (version[i] < s.need[i]) {  // served before a write we were told of reached the home
        host_.stats().stale_replies++;
        fetch(page, s);
        return;
      }
  }
  install(page, s, p.data + vbytes);
}

void HlrcEngine::install(PageId page, PageState &s, const std::byte *data) {
  std::byte *frame = host_.frame(page);
  const size_t size = host_.page_size();
  if (s.dirty) {
    page_refresh_keeping_writes(frame, s.twin.data(), data, size);  // 2-way diffing
    s.access = Access::Write;
  } else {
    std::memcpy(frame, data, size);
    s.access = Access::Read;
  }
  s.fetching = false;
  host_.stats().pages_fetched++;
  if (s.want_write && !s.dirty) make_dirty(page, s);  // saves the writer a second fault
  else host_.set_access(page, s.access);
  s.want_write = false;
  std::vector<Waiter *> waiters;
  waiters.swap(s.waiters);
  for (Waiter *w : waiters) w->complete(0);
}

void HlrcEngine::on_nack(const MsgHeader &m) {
  PageState &s = state(m.a);
  s.fetching = false;
  s.want_write = false;
  std::vector<Waiter *> waiters;
  waiters.swap(s.waiters);
  for (Waiter *w : waiters) w->complete((int)(int64_t)m.b);
}

void HlrcEngine::invalidate(PageId page, Rank creator, uint32_t index) {
  if (is_home(page) || creator == host_.rank()) return;  // the home copy already has it
  PageState &s = state(page);
  vector_time_raise(&s.need, host_.nranks(), creator, index);
  if (s.access != Access::None) {
    s.access = Access::None;  // a dirty page keeps its twin (2-way diffing)
    host_.set_access(page, Access::None);
    host_.stats().notices_applied++;
    host_.stats().invalidations_received++;
  }
}

void HlrcEngine::on_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kFetch: home_serve(m); break;
    case kPage: on_page(m, p); break;
    case kNack: on_nack(m); break;
    case kDiffs: home_apply_diffs(m, p); break;
    case kDiffsAck: on_diffs_ack(); break;
    default: fatal("hlrc: unknown message op %u from rank %d", (unsigned)m.op, m.src);
  }
}

}  // namespace agora
