// Home side of hlrc: serving page copies and applying diffs.

#include "common/log.h"
#include "common/stats.h"
#include "protocol/hlrc/hlrc_engine.h"
#include "protocol/shared/page_diff.h"

namespace agora {

void HlrcEngine::home_serve(const MsgHeader &m) {
  PageId page = m.a;
  if (!host_.page_allocated(page)) {
    host_.send(m.src, {Channel::Protocol, kNack, 0, page, (uint64_t)(int64_t)-5, 0});
    return;
  }
  PageState &s = state(page);
  page_copy_share_home(host_, page, s);  // from now on the home's writes produce notices
  std::vector<std::byte> reply;
  reply.reserve(4 * (size_t)host_.nranks() + host_.page_size());
  vector_time_append(s.version, host_.nranks(), &reply);
  const std::byte *frame = host_.frame(page);
  reply.insert(reply.end(), frame, frame + host_.page_size());
  host_.send(m.src, {Channel::Protocol, kPage, 0, page, 0, 0}, {reply.data(), reply.size()});
}

void HlrcEngine::home_apply_diffs(const MsgHeader &m, Payload p) {
  const uint32_t interval = (uint32_t)m.a;
  bool ok = diff_batch_for_each(p.data, p.size, [&](PageId page, const std::byte *diff, size_t size) {
    if (!is_home(page) || !page_diff_apply(host_.frame(page), host_.page_size(), diff, size))
      fatal("hlrc: malformed diff of page %llu from rank %d", (unsigned long long)page, m.src);
    // One diff per page per interval, sent in order: a page's versions only grow.
    AGORA_ASSERT(state(page).version.empty() || state(page).version[m.src] < interval);
    vector_time_raise(&state(page).version, host_.nranks(), m.src, interval);
  });
  if (!ok) fatal("hlrc: malformed diffs from rank %d", m.src);
  host_.send(m.src, {Channel::Protocol, kDiffsAck, 0, interval, 0, 0});
}

}  // namespace agora
