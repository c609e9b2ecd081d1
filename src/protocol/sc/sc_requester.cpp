// The requesting side of sc: faults become requests to the home; grants,
// invalidations and fetches from homes change this rank's copy.
#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "common/status.h"
#include "protocol/sc/sc_engine.h"

namespace agora {

ScEngine::ScEngine(EngineHost &host, const EngineOptions &options) : host_(host), options_(options) {
  read_streams_.reset(host.nranks(), options.prefetch_max);
  write_streams_.reset(host.nranks(), options.prefetch_max);
}

Access ScEngine::local_access(PageId page) const {
  auto it = access_.find(page);
  if (it != access_.end()) return it->second;
  return host_.home_of(page) == host_.rank() ? Access::Write : Access::None;
}

void ScEngine::set_local(PageId page, Access a) {
  access_[page] = a;
  host_.set_access(page, a);
}

void ScEngine::on_fault(PageId page, Access need, Waiter *w) {
  if (auto wb = writing_back_.find(page); wb != writing_back_.end()) {
    wb->second.waiters.push_back(w);  // retried once the home has the page (sc_evict.cpp)
    return;
  }
  if (local_access(page) >= need) {  // another thread of this rank got it first
    w->complete(AGORA_OK);
    return;
  }
  auto [it, fresh] = pending_.try_emplace(page);
  it->second.waiters.push_back(w);
  // One request per page at a time; a waiter that needed more than the
  // request brings faults again and asks for the rest.
  if (!fresh) return;
  Rank home = host_.home_of(page);
  const PageId extra = extra_pages(page, home, need);
  const bool holds_copy = local_access(page) >= Access::Read;
  if (home == host_.rank()) {
    if (need == Access::Write)
      home_write_request(page, {home, need, holds_copy}, extra, forget_epoch_);
    else
      home_request(page, {home, need});
  } else if (need == Access::Write) {
    mark_run(page, extra);
    host_.send_request(home,
                       {Channel::Protocol, kWriteRequest, 0, page, extra, forget_epoch_ << 1 | (holds_copy ? 1u : 0u)});
  } else {
    host_.send_request(home, {Channel::Protocol, kReadRequest, 0, page, extra, forget_epoch_});
  }
}

void ScEngine::complete_local(PageId page, Access granted, Payload data) {
  // A grant without the page is the home's own, or an upgrade of a copy
  // this rank holds: never a read copy out of nothing.
  AGORA_ASSERT(granted != Access::None);
  AGORA_ASSERT(data.data || granted == Access::Write || host_.home_of(page) == host_.rank());
  if (data.data) {
    // Install before opening the protection: no thread may see a partial page.
    std::memcpy(host_.frame(page), data.data, host_.page_size());
    host_.stats().pages_fetched++;
  }
  set_local(page, granted);
  unmark_run(page);
  auto it = pending_.find(page);
  if (it == pending_.end()) return;
  for (Waiter *w : it->second.waiters) w->complete(AGORA_OK);
  pending_.erase(it);
}

void ScEngine::fail_local(PageId page, int status) {
  unmark_run(page);
  auto it = pending_.find(page);
  if (it == pending_.end()) return;
  for (Waiter *w : it->second.waiters) w->complete(status);
  pending_.erase(it);
}

void ScEngine::on_invalidate(const MsgHeader &m) {
  host_.stats().invalidations_received++;
  set_local(m.a, Access::None);
  host_.send(m.src, {Channel::Protocol, kInvalidateAck, 0, m.a, 0, 0});
}

void ScEngine::on_fetch(const MsgHeader &m) {
  Access keep = (Access)m.b;
  if (auto wb = writing_back_.find(m.a); wb != writing_back_.end()) {
    // The fetch crossed this rank's write-back: the evicted page is the
    // newest copy. Nothing is kept (a listed reader without a copy acks
    // invalidations like any other).
    host_.send(m.src, {Channel::Protocol, kFetchData, 0, m.a, 0, 0}, {wb->second.page.data(), wb->second.page.size()});
    return;
  }
  if (keep == Access::None) host_.stats().invalidations_received++;
  // Revoke write access first so no store lands after the copy is taken.
  set_local(m.a, keep);
  host_.send(m.src, {Channel::Protocol, kFetchData, 0, m.a, 0, 0}, {host_.frame(m.a), host_.page_size()});
}

void ScEngine::on_message(const MsgHeader &m, Payload p) {
  const size_t ps = host_.page_size();
  switch ((Op)m.op) {
    case kReadRequest:
      home_read_request(m.a, m.src, m.b, m.c);
      break;
    case kWriteRequest:
      home_write_request(m.a, {m.src, Access::Write, (m.c & 1) != 0}, m.b, m.c >> 1);
      break;
    case kInvalidate:
      on_invalidate(m);
      break;
    case kInvalidateAck:
      home_on_ack(m.a);
      break;
    case kFetch:
      on_fetch(m);
      break;
    case kFetchData:
      home_on_fetch_data(m.a, p);
      break;
    case kGrant:
      complete_local(m.a, (Access)m.b, m.c ? p : Payload{});
      break;
    case kNack:
      fail_local(m.a, (int)(int64_t)m.b);
      break;
    case kReadGrantRun:
      if (m.b == 0 || p.size != m.b * ps)
        fatal("sc: read grant of %llu pages from rank %d carries %zu bytes", (unsigned long long)m.b, m.src, p.size);
      // The prefetched pages first: a thread woken for the first one may
      // touch them at once.
      install_prefetched(m.a + 1, m.b - 1, p.data + ps, m.c);
      complete_local(m.a, Access::Read, {p.data, ps});
      break;
    case kPrefetchGrant:
      if (p.size != m.b * ps)
        fatal("sc: prefetch of %llu pages from rank %d carries %zu bytes", (unsigned long long)m.b, m.src, p.size);
      install_prefetched(m.a, m.b, p.data, m.c);
      break;
    case kInvalidateRun:
      on_invalidate_run(m);
      break;
    case kInvalidateRunAck:
      home_on_run_ack(m.a);
      break;
    case kWriteBack:
      if (p.size != ps)
        fatal("sc: write-back of page %llu from rank %d carries %zu bytes", (unsigned long long)m.a, m.src, p.size);
      home_on_writeback(m.a, m.src, p);
      break;
    case kWriteBackAck:
      on_writeback_ack(m.a);
      break;
    case kGrantWriteRun:
      if (m.b == 0) fatal("sc: empty write run grant from rank %d", m.src);
      install_write_run(m.a + 1, m.b - 1, m.c);
      complete_local(m.a, Access::Write, {});
      break;
  }
}

}  // namespace agora
