// Twins and diffs: the bytes of a page that differ from its twin (the copy
// taken at the first write of an interval), as runs. The page is compared 8
// bytes at a time and runs are cut to the exact bytes that changed, so two
// ranks writing neighbouring bytes of one word never overwrite each other's.
//
// Encoding, appended to a buffer: repeated {u16 offset, u16 length, bytes}.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/types.h"

namespace agora {

// Appends the runs where `page` differs from `twin`; returns the bytes appended.
size_t page_diff_encode(const std::byte *page, const std::byte *twin, size_t page_size, std::vector<std::byte> *out);
// Calls run(offset, bytes, length) for every run of an encoded diff, in
// order. False if the encoding is malformed or reaches past the page.
template <typename Run>
bool page_diff_for_each_run(size_t page_size, const std::byte *diff, size_t diff_size, Run run) {
  size_t at = 0;
  while (at < diff_size) {
    if (at + 4 > diff_size) return false;
    uint16_t offset, length;
    std::memcpy(&offset, diff + at, 2);
    std::memcpy(&length, diff + at + 2, 2);
    at += 4;
    if (at + length > diff_size || (size_t)offset + length > page_size) return false;
    run((size_t)offset, diff + at, (size_t)length);
    at += length;
  }
  return true;
}

// Writes the runs of an encoded diff into `page`. False if the encoding is
// malformed or reaches past the page.
bool page_diff_apply(std::byte *page, size_t page_size, const std::byte *diff, size_t diff_size);
// The same for a page written since its twin was taken: the twin takes the
// diff, the page only where this rank has not written (its own writes,
// not yet sent, are newer than anything another rank could have sent).
bool page_diff_apply_under(std::byte *page, std::byte *twin, size_t page_size, const std::byte *diff, size_t diff_size);

// Bytes [offset, offset+length) of a copy written since its twin was taken
// become `bytes` where this rank has not written (frame == twin), and the
// twin takes `bytes`. Safe while other threads of the rank store to the
// frame: a store that lands meanwhile is kept (word compare-and-swap), so
// the frame must be 8-byte aligned.
void page_lay_under_writes(std::byte *frame, std::byte *twin, size_t offset, const std::byte *bytes, size_t length);

// 2-way diffing: a copy written since its twin was taken is refreshed with
// `data` (a newer copy from the home) without losing those writes: the
// frame becomes data plus this rank's writes, the twin data. Safe while
// other threads of the rank write the frame (page_lay_under_writes).
void page_refresh_keeping_writes(std::byte *frame, std::byte *twin, const std::byte *data, size_t page_size);

// The diffs of several pages for one home, as one message:
// {u64 page, u32 size, diff}*. Appends page's diff against its twin to
// *batch (sent even when empty) and returns the diff's size.
size_t diff_batch_encode(std::vector<std::byte> *batch, PageId page, const std::byte *bytes, const std::byte *twin,
                         size_t page_size);
// Appends a diff already encoded.
void diff_batch_append(std::vector<std::byte> *batch, PageId page, const std::vector<std::byte> &diff);
// Calls each(page, diff, size) for every diff of a batch, in order. False if
// the batch is malformed (a header or a diff reaching past its end).
template <typename Each>
bool diff_batch_for_each(const std::byte *data, size_t size, Each each) {
  size_t at = 0;
  while (at < size) {
    uint64_t page;
    uint32_t length;
    if (at + 12 > size) return false;
    std::memcpy(&page, data + at, 8);
    std::memcpy(&length, data + at + 8, 4);
    at += 12;
    if (at + length > size) return false;
    each((PageId)page, data + at, (size_t)length);
    at += length;
  }
  return true;
}

}  // namespace agora
