// regc and the bounded cache (AGORA_CACHE, docs/cache.md): evicting a copy.
//
// As under hlrc (hlrc_evict.cpp): a clean copy is dropped, and the next
// fetch brings a version at least as new (need never decreases). A dirty
// copy's diff goes home now (kWriteBack), applied without a version; the
// interval's close still makes the page's entry, with an empty diff that
// numbers the version, and the entry is a notice rather than an update
// (regc_publish.cpp: a diff taken after a write-back is not the whole
// change). Publication (rule 1's broadcast, a lock's release, a barrier)
// waits for write-backs as for diffs (when_acknowledged), and a thread
// touching the page meanwhile waits for the acknowledgement before it is
// fetched again.
#include "common/log.h"
#include "common/stats.h"
#include "protocol/regc/regc_engine.h"
#include "protocol/shared/page_copy_checks.h"
#include "protocol/shared/page_diff.h"

namespace agora {

ProtocolEngine::Eviction RegcEngine::evict(PageId page) {
  if (is_home(page)) return Eviction::Busy;  // the home copy is the reference, never cached
  auto it = pages_.find(page);
  if (it == pages_.end()) return Eviction::Dropped;
  PageState &s = it->second;
  Eviction e = page_copy_evict(host_, page, s, writebacks_.to(host_.home_of(page)), options_.cache_mutation);
  if (e != Eviction::Busy) {
    s.early.clear();  // updates waiting for a copy that is gone
    early_pages_.erase(page);
  }
  if (e == Eviction::WritingBack) ++writebacks_outstanding_;
  AGORA_ASSERT(page_copy_consistent(host_, page, s, fine_grain()));
  return e;
}

void RegcEngine::end_evictions() { writebacks_.send(host_, kWriteBack); }

bool RegcEngine::frame_in_use(PageId page) const {
  return page_copy_frame_in_use(pages_, host_, page,
                                options_.cache_mutation == EngineOptions::CacheMutation::DirtyFrameTaken);
}

void RegcEngine::home_apply_writebacks(const MsgHeader &m, Payload p) {
  WriteBackBatches::serve(host_, m, p, kWriteBackAck, name(), [&](PageId page, const std::byte *diff, size_t size) {
    if (!is_home(page))
      fatal("%s: write-back of page %llu from rank %d, not homed here", name(), (unsigned long long)page, m.src);
    if (!host_.page_allocated(page)) return;  // freed meanwhile (a racing agora_free)
    if (!page_diff_apply(host_.frame(page), host_.page_size(), diff, size))
      fatal("%s: malformed write-back of page %llu from rank %d", name(), (unsigned long long)page, m.src);
    // The home's own open interval diffs against its twin: keep the twin
    // equal to the frame outside the home's own writes (as for diffs).
    PageState &s = state(page);
    if (s.dirty && !s.twin.empty()) page_diff_apply(s.twin.data(), host_.page_size(), diff, size);
    if (!s.standing.empty()) page_diff_apply(s.standing.data(), host_.page_size(), diff, size);
  });
}

void RegcEngine::on_writebacks_ack(const MsgHeader &m, Payload p) {
  WriteBackBatches::acknowledged(m, p, name(), [&](PageId page) {
    if (writebacks_outstanding_ == 0) fatal("%s: unexpected write-back acknowledgement", name());
    --writebacks_outstanding_;
    auto it = pages_.find(page);  // freed meanwhile: forgotten
    if (it != pages_.end() && page_copy_written_back(it->second) && !it->second.fetching) fetch_run(page, 1);
  });
  run_acknowledged();
}

}  // namespace agora
