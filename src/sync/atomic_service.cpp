#include "sync/atomic_service.h"

#include <cstring>
#include <vector>

#include "sync/spin_backoff.h"

namespace agora {

namespace {
template <typename T>
T apply(AtomicOp op, T a, T b) {
  switch (op) {
    case AtomicOp::Add:
      return (T)(a + b);
    case AtomicOp::Sub:
      return (T)(a - b);
    case AtomicOp::And:
      return (T)(a & b);
    case AtomicOp::Or:
      return (T)(a | b);
    case AtomicOp::Xor:
      return (T)(a ^ b);
    case AtomicOp::Nand:
      return (T) ~(a & b);
    default:
      return a;
  }
}

template <typename T>
void combine_as(AtomicOp op, const void *old, const void *operand, void *next) {
  T a, b;
  std::memcpy(&a, old, sizeof a);
  std::memcpy(&b, operand, sizeof b);
  T r = apply<T>(op, a, b);
  std::memcpy(next, &r, sizeof r);
}
}  // namespace

bool AtomicService::combine(AtomicOp op, uint32_t size, const void *old, const void *operand, void *next) {
  if (op == AtomicOp::Load || op == AtomicOp::Store || op == AtomicOp::Exchange || op == AtomicOp::CompareExchange)
    return false;
  switch (size) {
    case 1:
      combine_as<uint8_t>(op, old, operand, next);
      return true;
    case 2:
      combine_as<uint16_t>(op, old, operand, next);
      return true;
    case 4:
      combine_as<uint32_t>(op, old, operand, next);
      return true;
    case 8:
      combine_as<uint64_t>(op, old, operand, next);
      return true;
    case 16:
      combine_as<unsigned __int128>(op, old, operand, next);
      return true;
    default:
      return false;
  }
}

bool AtomicService::decide(const AtomicCall &c, const void *current, void *next, bool *exchanged) {
  if (exchanged) *exchanged = false;
  switch (c.op) {
    case AtomicOp::Load:
      std::memcpy(c.old, current, c.size);
      return false;
    case AtomicOp::Store:
      std::memcpy(next, c.operand, c.size);
      return true;
    case AtomicOp::Exchange:
      if (c.old) std::memcpy(c.old, current, c.size);
      std::memcpy(next, c.operand, c.size);
      return true;
    case AtomicOp::CompareExchange:
      if (std::memcmp(current, c.expected, c.size) != 0) {
        std::memcpy(c.expected, current, c.size);
        return false;
      }
      if (exchanged) *exchanged = true;
      std::memcpy(next, c.operand, c.size);
      return true;
    default:
      combine(c.op, c.size, current, c.operand, next);
      if (c.old) std::memcpy(c.old, current, c.size);
      if (c.updated) std::memcpy(c.updated, next, c.size);
      return true;
  }
}

int AtomicService::perform(const AtomicCall &c, bool *exchanged) {
  if (exchanged) *exchanged = false;
  uint64_t key = key_of(c.address);
  if (int status = host_.lock_word(key)) return status;
  // Small words on the stack; a generic __atomic_load of a large struct on the heap.
  unsigned char small[2][16];
  std::vector<unsigned char> large;
  unsigned char *current = small[0], *next = small[1];
  if (c.size > sizeof small[0]) {
    large.resize(2 * (size_t)c.size);
    current = large.data();
    next = large.data() + c.size;
  }
  if (c.op != AtomicOp::Store) host_.read_word(c.address, current, c.size);
  if (decide(c, current, next, exchanged)) host_.write_word(c.address, next, c.size);
  return host_.unlock_word(key);
}

uint32_t AtomicSpin::after_load(uintptr_t address, const void *value, uint32_t size) {
  uint64_t v = 0;
  std::memcpy(&v, value, size < sizeof v ? size : sizeof v);
  if (address != address_ || v != value_) {
    address_ = address;
    value_ = v;
    repeats_ = 0;
    return 0;
  }
  return spin_backoff_us(++repeats_, kFreeRepeats, kMaxNapUs);
}

}  // namespace agora
