#include "protocol/shared/page_diff.h"

#include <cstdint>
#include <cstring>

namespace agora {

namespace {
void put_u16(std::vector<std::byte> *out, uint16_t v) {
  std::byte b[2];
  std::memcpy(b, &v, 2);
  out->insert(out->end(), b, b + 2);
}
}  // namespace

size_t page_diff_encode(const std::byte *page, const std::byte *twin, size_t page_size, std::vector<std::byte> *out) {
  const size_t before = out->size();
  size_t i = 0;
  while (i < page_size) {
    // Skip equal 8-byte words quickly, then find the first differing byte.
    while (i + 8 <= page_size && std::memcmp(page + i, twin + i, 8) == 0) i += 8;
    while (i < page_size && page[i] == twin[i]) ++i;
    if (i >= page_size) break;
    size_t start = i;
    while (i < page_size && page[i] != twin[i]) ++i;
    put_u16(out, (uint16_t)start);
    put_u16(out, (uint16_t)(i - start));
    out->insert(out->end(), page + start, page + i);
  }
  return out->size() - before;
}

bool page_diff_apply(std::byte *page, size_t page_size, const std::byte *diff, size_t diff_size) {
  return page_diff_for_each_run(page_size, diff, diff_size, [&](size_t offset, const std::byte *bytes, size_t length) {
    std::memcpy(page + offset, bytes, length);
  });
}

bool page_diff_apply_under(std::byte *page, std::byte *twin, size_t page_size, const std::byte *diff,
                           size_t diff_size) {
  return page_diff_for_each_run(page_size, diff, diff_size, [&](size_t offset, const std::byte *bytes, size_t length) {
    for (size_t i = 0; i < length; ++i) {
      if (page[offset + i] == twin[offset + i]) page[offset + i] = bytes[i];
      twin[offset + i] = bytes[i];
    }
  });
}

void page_refresh_keeping_writes(std::byte *frame, std::byte *twin, const std::byte *data, size_t page_size) {
  std::vector<std::byte> mine;
  page_diff_encode(frame, twin, page_size, &mine);
  std::memcpy(frame, data, page_size);
  std::memcpy(twin, data, page_size);
  page_diff_apply(frame, page_size, mine.data(), mine.size());
}

namespace {
void put_batch_header(std::vector<std::byte> *batch, size_t at, PageId page, size_t length) {
  uint64_t p = page;
  uint32_t len = (uint32_t)length;
  std::memcpy(batch->data() + at, &p, 8);
  std::memcpy(batch->data() + at + 8, &len, 4);
}
}  // namespace

size_t diff_batch_encode(std::vector<std::byte> *batch, PageId page, const std::byte *bytes, const std::byte *twin,
                         size_t page_size) {
  size_t header = batch->size();
  batch->resize(header + 12);
  size_t n = page_diff_encode(bytes, twin, page_size, batch);
  put_batch_header(batch, header, page, n);
  return n;
}

void diff_batch_append(std::vector<std::byte> *batch, PageId page, const std::vector<std::byte> &diff) {
  size_t header = batch->size();
  batch->resize(header + 12);
  put_batch_header(batch, header, page, diff.size());
  batch->insert(batch->end(), diff.begin(), diff.end());
}

}  // namespace agora
