// The directory hash table of SWCC Split-C (figure 2): rows by home rank, columns
// by the low bits of the block address, each slot the head of a chain of
// entries; an entry is created on first use and never freed (the paper keeps
// them too). Entries live in a deque, so their addresses are stable. The
// index bits given are where it starts: when it holds twice as many entries
// as slots it doubles (one more index bit), so a transfer of a million
// blocks does not walk chains of hundreds.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "common/types.h"

namespace agora::gptr {

template <typename Entry>
class SwccDirectory {
 public:
  SwccDirectory(Rank rows, uint32_t index_bits)
      : rows_(rows), index_bits_(index_bits), heads_((size_t)rows << index_bits, nullptr) {}

  Entry *find(Rank home, uint64_t block) const {
    for (Entry *e = heads_[slot(home, block)]; e; e = e->next)
      if (e->block == block && e->home == home) return e;
    return nullptr;
  }
  Entry *find_or_create(Rank home, uint64_t block) {
    if (Entry *e = find(home, block)) return e;
    if (entries_.size() >= 2 * heads_.size()) grow();
    Entry &e = entries_.emplace_back();
    e.home = home;
    e.block = block;
    link(e);
    return &e;
  }
  template <typename Fn>
  void for_each(Fn fn) {
    for (Entry &e : entries_) fn(e);
  }
  size_t size() const { return entries_.size(); }

 private:
  void link(Entry &e) {
    size_t s = slot(e.home, e.block);
    e.next = heads_[s];
    heads_[s] = &e;
  }
  void grow() {
    index_bits_++;
    heads_.assign((size_t)rows_ << index_bits_, nullptr);
    for (Entry &e : entries_) link(e);
  }
  // `block` is a block number (offset / block size): its low bits index.
  size_t slot(Rank home, uint64_t block) const {
    return (size_t)home << index_bits_ | (block & ((1ull << index_bits_) - 1));
  }
  Rank rows_;
  uint32_t index_bits_;
  std::vector<Entry *> heads_;
  std::deque<Entry> entries_;
};

}  // namespace agora::gptr
