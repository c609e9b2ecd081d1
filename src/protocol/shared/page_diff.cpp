#include "protocol/shared/page_diff.h"

#include <algorithm>
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

namespace {
constexpr size_t kWord = sizeof(uint64_t);

// The frame's bytes [offset, offset+length) of one aligned word become
// `bytes` where the frame still equals the twin. Other threads of the rank
// may be storing to the word meanwhile: a compare-and-swap keeps a store
// that lands between the comparison and the write (a plain write would
// undo it, and the twin would then hide it from every later diff).
void lay_word_under(std::byte *frame, const std::byte *twin, size_t word, size_t offset, size_t length,
                    const std::byte *bytes) {
  auto *at = reinterpret_cast<uint64_t *>(frame + word);
  uint64_t seen = __atomic_load_n(at, __ATOMIC_RELAXED);
  for (;;) {
    std::byte cur[kWord], next[kWord];
    std::memcpy(cur, &seen, kWord);
    std::memcpy(next, cur, kWord);
    for (size_t i = offset; i < offset + length; ++i)
      if (cur[i - word] == twin[i]) next[i - word] = bytes[i - offset];
    uint64_t want = 0;
    std::memcpy(&want, next, kWord);
    if (want == seen || __atomic_compare_exchange_n(at, &seen, want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
  }
}
}  // namespace

void page_lay_under_writes(std::byte *frame, std::byte *twin, size_t offset, const std::byte *bytes, size_t length) {
  const size_t end = offset + length;
  for (size_t at = offset; at < end;) {
    const size_t word = at - at % kWord;
    const size_t stop = std::min(end, word + kWord);
    lay_word_under(frame, twin, word, at, stop - at, bytes + (at - offset));
    at = stop;
  }
  std::memcpy(twin + offset, bytes, length);
}

bool page_diff_apply_under(std::byte *page, std::byte *twin, size_t page_size, const std::byte *diff,
                           size_t diff_size) {
  return page_diff_for_each_run(page_size, diff, diff_size, [&](size_t offset, const std::byte *bytes, size_t length) {
    page_lay_under_writes(page, twin, offset, bytes, length);
  });
}

void page_refresh_keeping_writes(std::byte *frame, std::byte *twin, const std::byte *data, size_t page_size) {
  // Only the words the home changed are touched: the others hold this
  // rank's writes or equal the home's already.
  for (size_t word = 0; word < page_size; word += kWord) {
    const size_t length = std::min(kWord, page_size - word);
    if (std::memcmp(twin + word, data + word, length) != 0)
      page_lay_under_writes(frame, twin, word, data + word, length);
  }
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
