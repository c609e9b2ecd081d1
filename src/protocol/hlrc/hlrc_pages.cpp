// Requester side of hlrc: access faults, twins, page fetches and installs.

#include "common/log.h"
#include "common/stats.h"
#include "protocol/shared/page_copy_checks.h"
#include "protocol/hlrc/hlrc_engine.h"

namespace agora {

HlrcEngine::HlrcEngine(EngineHost &host, const EngineOptions &options)
    : host_(host),
      options_(options),
      notices_(host.rank(), host.nranks()),
      previous_barrier_(host.nranks(), 0) {
  if (host.page_size() > 32768) fatal("hlrc: page size %zu exceeds 32 KiB", host.page_size());
}

HlrcEngine::PageState &HlrcEngine::state(PageId page) { return page_copy_state(pages_, host_, page, page_floor_); }

Access HlrcEngine::local_access(PageId page) const { return page_copy_access(pages_, host_, page); }

void HlrcEngine::on_fault(PageId page, Access need, Waiter *w) {
  PageState &s = state(page);
  if (page_copy_fault(host_, page, s, need, w, &dirty_, false)) fetch(page, s);
  AGORA_ASSERT(page_copy_consistent(host_, page, s, false));
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
  page_copy_install(host_, page, s, p.data + vbytes, &dirty_, false);
}

void HlrcEngine::invalidate(PageId page, Rank creator, uint32_t index) {
  if (is_home(page) || creator == host_.rank()) return;  // the home copy already has it
  PageState &s = state(page);
  vector_time_raise(&s.need, host_.nranks(), creator, index);
  page_copy_invalidate(host_, page, s);
}

void HlrcEngine::on_message(const MsgHeader &m, Payload p) {
  switch (m.op) {
    case kFetch: home_serve(m); break;
    case kPage: on_page(m, p); break;
    case kNack: page_copy_refused(state(m.a), (int)(int64_t)m.b); break;
    case kDiffs: home_apply_diffs(m, p); break;
    case kDiffsAck: on_diffs_ack(); break;
    default: fatal("hlrc: unknown message op %u from rank %d", (unsigned)m.op, m.src);
  }
}

}  // namespace agora
