#include "sync/release_bundles.h"

#include <cstring>

namespace agora {

void ReleaseBundles::keep(Rank from, Payload info) {
  if (!info.size) return;
  by_rank_[from].assign(info.data, info.data + info.size);
}

void ReleaseBundles::encode_for(Rank recipient, std::vector<std::byte> *out) const {
  for (const auto &[rank, info] : by_rank_) {
    if (rank == recipient) continue;
    uint64_t size = info.size();
    size_t at = out->size();
    out->resize(at + sizeof size + info.size());
    std::memcpy(out->data() + at, &size, sizeof size);
    std::memcpy(out->data() + at + sizeof size, info.data(), info.size());
  }
}

bool ReleaseBundles::apply(ProtocolEngine &engine, Payload encoded) {
  size_t at = 0;
  if (!encoded.size) {
    engine.acquire({});  // once per acquire, even with nothing to apply
    return true;
  }
  while (at < encoded.size) {
    uint64_t size = 0;
    if (encoded.size - at < sizeof size) return false;
    std::memcpy(&size, encoded.data + at, sizeof size);
    at += sizeof size;
    if (size > encoded.size - at) return false;
    engine.acquire({encoded.data + at, (size_t)size});
    at += size;
  }
  return true;
}

}  // namespace agora
