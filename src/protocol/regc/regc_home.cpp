// Home side of regc: serving copies with their version, applying diffs in
// arrival order (each one the page's next version).
#include <cstring>

#include "common/log.h"
#include "common/stats.h"
#include "common/status.h"
#include "protocol/regc/regc_engine.h"
#include "protocol/shared/page_diff.h"

namespace agora {

void RegcEngine::home_serve(const MsgHeader &m) {
  const PageId first = m.a;
  const uint64_t count = m.b ? m.b : 1;
  if (count > kMaxFetchRun || first + count < first)
    fatal("%s: malformed fetch of %llu pages from rank %d", name(), (unsigned long long)count, m.src);
  // One reply for the run: each page served with its version, or refused if
  // not allocated (a page fetched along past the end of an allocation: only
  // a thread that touched it fails).
  std::vector<std::byte> reply;
  reply.reserve(count * (12 + host_.page_size()));
  for (PageId page = first; page < first + count; ++page) {
    if (!is_home(page) || !host_.page_allocated(page)) {
      page_reply_status(&reply, AGORA_ERR_BAD_POINTER);
      continue;
    }
    PageState &s = state(page);
    page_copy_share_home(host_, page, s);  // from now on the home's own writes produce entries (regc_home_writes.cpp)
    page_reply_status(&reply, 0);
    const std::byte *v = reinterpret_cast<const std::byte *>(&s.version);
    reply.insert(reply.end(), v, v + 8);
    const std::byte *frame = host_.frame(page);
    const size_t at = reply.size();
    reply.insert(reply.end(), frame, frame + host_.page_size());
    // The frame may hold writes not yet in an entry: note whether the copy
    // served (taken once, here) is the published page (note_served).
    if (fine_grain() && (s.dirty || !s.standing.empty())) note_served(s, reply.data() + at);
  }
  host_.send(m.src, {Channel::Protocol, kPage, 0, first, count, 0}, {reply.data(), reply.size()});
}

void RegcEngine::home_apply_diffs(const MsgHeader &m, Payload p) {
  std::vector<std::byte> versions;
  std::vector<PageId> noticed;
  bool ok = diff_batch_for_each(p.data, p.size, [&](PageId page, const std::byte *diff, size_t size) {
    if (!is_home(page) || !page_diff_apply(host_.frame(page), host_.page_size(), diff, size))
      fatal("%s: malformed diff of page %llu from rank %d", name(), (unsigned long long)page, m.src);
    PageState &s = state(page);
    // The home's own open interval diffs against its twin: keep the twin
    // equal to the frame outside the home's own writes.
    if (s.dirty && !s.twin.empty()) page_diff_apply(s.twin.data(), host_.page_size(), diff, size);
    if (!s.standing.empty())
      page_diff_apply(s.standing.data(), host_.page_size(), diff, size);  // likewise (regc_home_writes.cpp)
    // Observers of the page (agora_flush) hear of the change: a release
    // is a flush too.
    flush_.snapshot_apply(page, diff, size);
    if (size && flush_.notify(page, m.src)) noticed.push_back(page);
    uint64_t v = ++s.version;
    size_t o = versions.size();
    versions.resize(o + 8);
    std::memcpy(versions.data() + o, &v, 8);
  });
  if (!ok) fatal("%s: malformed diffs from rank %d", name(), m.src);
  // The writer publishes only once the observers have the notices.
  const Rank to = m.src;
  const uint64_t batch = m.a;
  flush_.when_all_acknowledged(noticed, [this, to, batch, versions = std::move(versions)] {
    host_.send(to, {Channel::Protocol, kDiffsAck, 0, batch, 0, 0}, {versions.data(), versions.size()});
  });
}

}  // namespace agora
