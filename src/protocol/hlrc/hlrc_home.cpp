// Home side of hlrc: serving page copies and applying diffs.

#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "common/status.h"
#include "protocol/hlrc/hlrc_engine.h"
#include "protocol/shared/page_diff.h"

namespace agora {

void HlrcEngine::home_serve(const MsgHeader &m) {
  const PageId first = m.a;
  const uint64_t count = m.b ? m.b : 1;
  if (count > kMaxFetchRun || first + count < first)
    fatal("hlrc: malformed fetch of %llu pages from rank %d", (unsigned long long)count, m.src);
  // One reply for the run: each page served, or refused if not allocated
  // (a prefetched page past the end of an allocation; only a thread that
  // touched it fails).
  std::vector<std::byte> reply;
  reply.reserve(count * (4 + 4 * (size_t)host_.nranks() + host_.page_size()));
  for (PageId page = first; page < first + count; ++page) {
    if (!is_home(page) || !host_.page_allocated(page)) {
      page_reply_status(&reply, AGORA_ERR_BAD_POINTER);
      continue;
    }
    PageState &s = state(page);
    share_home(page, s);  // from now on the home's writes produce notices
    page_reply_status(&reply, 0);
    vector_time_append(s.version, host_.nranks(), &reply);
    const std::byte *frame = host_.frame(page);
    reply.insert(reply.end(), frame, frame + host_.page_size());
  }
  host_.send(m.src, {Channel::Protocol, kPage, 0, first, count, 0}, {reply.data(), reply.size()});
}

void HlrcEngine::home_apply_diffs(const MsgHeader &m, Payload p) {
  const uint32_t interval = (uint32_t)m.a;
  std::vector<PageId> noticed;
  bool ok = diff_batch_for_each(p.data, p.size, [&](PageId page, const std::byte *diff, size_t size) {
    if (!is_home(page) || !page_diff_apply(host_.frame(page), host_.page_size(), diff, size))
      fatal("hlrc: malformed diff of page %llu from rank %d", (unsigned long long)page, m.src);
    // One diff per page per interval, sent in order: a page's versions only grow.
    AGORA_ASSERT(state(page).version.empty() || state(page).version[m.src] < interval);
    vector_time_raise(&state(page).version, host_.nranks(), m.src, interval);
    // Observers of the page (agora_flush) hear of the change, as from a
    // flush: a release is a flush too.
    flush_.snapshot_apply(page, diff, size);
    if (size && flush_.notify(page, m.src)) noticed.push_back(page);
  });
  if (!ok) fatal("hlrc: malformed diffs from rank %d", m.src);
  // Diffs of one creator arrive in interval order: every one up to this
  // interval that names a page homed here is now applied.
  vector_time_raise(&applied_, host_.nranks(), m.src, interval);
  publish_home_meta();
  // The writer publishes only once the observers have the notices.
  const Rank to = m.src;
  flush_.when_all_acknowledged(noticed, [this, to, interval] {
    host_.send(to, {Channel::Protocol, kDiffsAck, 0, interval, 0, 0});
  });
}

}  // namespace agora
