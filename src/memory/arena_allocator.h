// A rank's agora_malloc heap inside its arena: first fit over a free list
// with coalescing. Blocks are tracked out of band, so a double free or a
// pointer that is not the start of a live block is detected, never trusted.
#pragma once
#include <cstdint>
#include <map>

namespace agora {

class ArenaAllocator {
 public:
  static constexpr uint64_t kAlign = 64;  // a cache line: no false sharing between blocks' headers
  ArenaAllocator(uint64_t first_offset, uint64_t bytes, uint64_t page_size);

  // Offset of a new block, or UINT64_MAX when no free block is large enough
  // (any size, up to UINT64_MAX, is checked without overflow).
  uint64_t allocate(uint64_t bytes);
  enum class FreeResult { Ok, NotAllocated, InsideBlock };
  FreeResult release(uint64_t offset);
  // Does any live block touch this page (index from the arena's start)?
  // O(log blocks): no per-page table, so a large arena costs nothing unused.
  bool page_live(uint64_t page_index) const;
  uint64_t bytes_free() const { return free_bytes_; }

 private:
  void coalesce(uint64_t off, uint64_t len);  // frees [off, off+len), merged with free neighbours
  uint64_t first_, page_, size_;
  uint64_t free_bytes_;
  std::map<uint64_t, uint64_t> free_;  // offset -> length
  std::map<uint64_t, uint64_t> live_;  // offset -> length
};

}  // namespace agora
