// Write-backs of dirty copies evicted from the bounded cache (hlrc, regc),
// gathered per home while the host evicts a batch and sent as one message
// per home when it is done (ProtocolEngine::end_evictions); the home applies
// them in order and acknowledges them with one message naming the pages.
// A message and an acknowledgement per page cost a wake-up of the home's
// service thread each: figure 4's sweep wrote ~1200 pages back per rank and
// iteration (docs/cache.md).
#pragma once
#include <cstring>
#include <map>
#include <vector>

#include "protocol/engine.h"
#include "protocol/shared/page_diff.h"

namespace agora {

class WriteBackBatches {
 public:
  // The diff batch (page_diff.h) that write-backs to `home` are appended to.
  std::vector<std::byte> *to(Rank home) { return &batches_[home]; }
  // Sends each home's batch as one request `op` (a = its number of pages).
  void send(EngineHost &host, uint16_t op);

  // At the home: applies each write-back of a batch with
  // apply(page, diff, size) (which validates the page), then acknowledges
  // with one `ack_op` whose payload lists the pages. A malformed batch ends
  // the job.
  template <typename Apply>
  static void serve(EngineHost &host, const MsgHeader &m, Payload p, uint16_t ack_op, const char *engine, Apply apply) {
    std::vector<std::byte> pages;
    bool ok = diff_batch_for_each(p.data, p.size, [&](PageId page, const std::byte *diff, size_t size) {
      apply(page, diff, size);
      const uint64_t id = page;
      pages.insert(pages.end(), (const std::byte *)&id, (const std::byte *)&id + 8);
    });
    if (!ok || pages.size() != 8 * m.a) malformed(engine, "write-back", m.src);
    host.send(m.src, {Channel::Protocol, ack_op, 0, m.a, 0, 0}, {pages.data(), pages.size()});
  }
  // At the evicting rank: calls done(page) for each page an acknowledgement names.
  template <typename Done>
  static void acknowledged(const MsgHeader &m, Payload p, const char *engine, Done done) {
    if (m.a == 0 || p.size != 8 * m.a) malformed(engine, "write-back acknowledgement", m.src);
    for (size_t i = 0; i < m.a; ++i) {
      uint64_t page;
      std::memcpy(&page, p.data + 8 * i, 8);
      done((PageId)page);
    }
  }

 private:
  [[noreturn]] static void malformed(const char *engine, const char *what, Rank from);
  std::map<Rank, std::vector<std::byte>> batches_;
};

}  // namespace agora
