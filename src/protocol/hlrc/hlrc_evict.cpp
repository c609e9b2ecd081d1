// hlrc and the bounded cache (AGORA_CACHE, docs/cache.md): evicting a copy.
//
// A clean copy is just dropped: a later fault fetches it again, and the
// home's copy is at least as new as the one dropped (versions only grow), so
// no notice is missed. A dirty copy's writes go home now (kWriteBack: its
// diff against the twin, applied without a version), and the interval that
// wrote it still closes as usual: the page is in its notice, and the close
// sends it an empty diff that raises the home's version to the interval,
// after the write-back on the same channel. The notice leaves only once the
// write-back is acknowledged too (writebacks_outstanding_), so "notice seen
// => write at the home" still holds. A thread touching the page meanwhile
// waits for the acknowledgement before the page is fetched again: a fetch
// (above all a one-sided read) could otherwise overtake the write-back and
// bring back a copy without this rank's own writes.
#include "common/log.h"
#include "common/stats.h"
#include "protocol/hlrc/hlrc_engine.h"
#include "protocol/shared/page_copy_checks.h"
#include "protocol/shared/page_diff.h"

namespace agora {

ProtocolEngine::Eviction HlrcEngine::evict(PageId page) {
  if (is_home(page)) return Eviction::Busy;  // the home copy is the reference, never cached
  auto it = pages_.find(page);
  if (it == pages_.end()) return Eviction::Dropped;
  PageState &s = it->second;
  Eviction e = page_copy_evict(host_, page, s, writebacks_.to(host_.home_of(page)), options_.cache_mutation);
  if (e == Eviction::WritingBack) ++writebacks_outstanding_;
  AGORA_ASSERT(page_copy_consistent(host_, page, s, false));
  return e;
}

void HlrcEngine::end_evictions() { writebacks_.send(host_, kWriteBack); }

bool HlrcEngine::frame_in_use(PageId page) const {
  return page_copy_frame_in_use(pages_, host_, page,
                                options_.cache_mutation == EngineOptions::CacheMutation::DirtyFrameTaken);
}

void HlrcEngine::home_apply_writebacks(const MsgHeader &m, Payload p) {
  WriteBackBatches::serve(host_, m, p, kWriteBackAck, "hlrc", [&](PageId page, const std::byte *diff, size_t size) {
    if (!is_home(page))
      fatal("hlrc: write-back of page %llu from rank %d, not homed here", (unsigned long long)page, m.src);
    // Freed meanwhile (a racing agora_free): nothing to keep.
    if (!host_.page_allocated(page)) return;
    if (!page_diff_apply(host_.frame(page), host_.page_size(), diff, size))
      fatal("hlrc: malformed write-back of page %llu from rank %d", (unsigned long long)page, m.src);
  });
}

void HlrcEngine::on_writebacks_ack(const MsgHeader &m, Payload p) {
  WriteBackBatches::acknowledged(m, p, "hlrc", [&](PageId page) {
    if (writebacks_outstanding_ == 0) fatal("hlrc: unexpected write-back acknowledgement");
    --writebacks_outstanding_;
    auto it = pages_.find(page);  // freed meanwhile: forgotten
    if (it != pages_.end() && page_copy_written_back(it->second) && !it->second.fetching) fetch_run(page, 1);
  });
  if (writebacks_outstanding_ > 0 || acks_outstanding_ > 0) return;
  std::vector<std::function<void()>> ready;
  ready.swap(on_published_);
  for (auto &fn : ready) fn();
}

}  // namespace agora
