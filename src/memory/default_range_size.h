// The size of the global range when AGORA_MEMORY is unset (docs/memory.md).
//
// The range is address space, not memory: pages are committed when touched
// and the per-page metadata is lazily committed too, so reserving 16 TiB
// costs what reserving 4 GiB does (about 1.5 ms at start, the same RSS).
// What bounds it is address space: both views must fit in every rank, and
// the program needs room beside them for its own mappings, MPI's, thread
// stacks and Agora's metadata (range / 4096 per rank). So: half of the
// largest range that fits in every rank, at most 16 TiB, rounded down to a
// power of two so the value is easy to read and to restate.
#pragma once
#include <cstdint>

namespace agora {

// The most AGORA_MEMORY defaults to: a 128 TiB address space holds two
// 40 TiB views at most, and 16 TiB leaves the other half of the free space
// to the program (the bigmem_16T tests run there).
constexpr uint64_t kDefaultMemoryCap = 16ull << 40;
// Below this the default gives up (AGORA_MEMORY's own minimum).
constexpr uint64_t kDefaultMemoryMin = 1ull << 20;

// `largest_fit`: the largest range that fits in every rank now (the minimum
// over the ranks of what vm_room finds, both views counted). 0 if none of
// at least kDefaultMemoryMin leaves the program room.
constexpr uint64_t default_range_size(uint64_t largest_fit) {
  uint64_t want = largest_fit / 2;
  if (want > kDefaultMemoryCap) want = kDefaultMemoryCap;
  if (want < kDefaultMemoryMin) return 0;
  uint64_t size = kDefaultMemoryMin;
  while (size <= want / 2) size *= 2;
  return size;
}

}  // namespace agora
