// One-sided reads under hlrc: a miss reads the page straight from its home's
// frames, with no action by the home (Wong & Rendell's fetch without the home's
// CPU), when the host offers it and also tracks home writes.
//
// Why a copy read this way is as good as one the home sent:
//  - It holds every write this rank must see. A write this rank was told
//    of (a notice, raising the page's `need`) reached the home before the
//    notice left its writer (diffs are acknowledged first), and this rank's
//    own diffs raise `need` too. The home publishes, after the frames and
//    with a release fence, the highest interval of each creator whose diffs
//    it has applied (home_meta; its own closed intervals; at least the
//    floor of freed pages). Diffs of one creator reach a home in interval
//    order, so meta[c] >= need[c] means every diff of c the copy needs is in
//    the frames; the host reads the pages after the meta, so the copy holds
//    them. A copy failing the check (own diffs still travelling, freed
//    memory reused) is dropped and the page asked for by message, which the
//    home serves after the diffs this rank sent before (one channel).
//  - Later writes of the home are announced. The home does not know the
//    copy left, so it cannot protect the page: the reader marks the page
//    shared at the home before reading it, and the home's next interval
//    close collects the marks, starts tracking those pages and names them
//    in that interval's notice (hlrc_home_writes.cpp has the ordering).
//  - Races are those of a message reply: a notice arriving while the read
//    is in flight raises `need` and the check drops the copy; a page freed
//    meanwhile has lost its fetching state and the copy is a duplicate; a
//    dirty invalid page gets 2-way diffing as with any reply.
#include "common/log.h"
#include "common/stats.h"
#include "protocol/hlrc/hlrc_engine.h"

namespace agora {

bool HlrcEngine::one_sided() const {
  return host_.tracks_home_writes() && host_.home_meta() != nullptr && home_meta_bytes() <= kHomeMetaBytes;
}

void HlrcEngine::on_remote_read(Rank home, PageId first, uint32_t count, Payload meta, Payload pages) {
  const size_t size = host_.page_size();
  if (count == 0 || count > kMaxFetchRun || meta.size < home_meta_bytes() || pages.size != count * size)
    fatal("hlrc: malformed one-sided read of %u pages from rank %d (%zu + %zu bytes)", count, home, meta.size,
          pages.size);
  const VectorTime applied = vector_time_read(meta.data, host_.nranks());
  AccessRuns runs;  // one protection change per run of pages installed
  host_.filling_frames(first, count);
  for (uint32_t i = 0; i < count; ++i) receive_copy(first + i, applied, pages.data + i * size, i > 0, true, &runs);
  runs.apply(host_);
}

}  // namespace agora
