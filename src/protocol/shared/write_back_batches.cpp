#include "protocol/shared/write_back_batches.h"

#include "common/log.h"

namespace agora {

void WriteBackBatches::send(EngineHost &host, uint16_t op) {
  for (auto &[home, diffs] : batches_) {
    uint64_t pages = 0;
    diff_batch_for_each(diffs.data(), diffs.size(), [&](PageId, const std::byte *, size_t) { ++pages; });
    if (pages) host.send_request(home, {Channel::Protocol, op, 0, pages, 0, 0}, {diffs.data(), diffs.size()});
  }
  batches_.clear();
}

void WriteBackBatches::malformed(const char *engine, const char *what, Rank from) {
  fatal("%s: malformed %s from rank %d", engine, what, from);
}

}  // namespace agora
