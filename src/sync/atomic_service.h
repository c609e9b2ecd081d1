// Atomic read-modify-writes on global memory (C11 <stdatomic.h>, the GNU
// __atomic/__sync builtins, C++ std::atomic; docs/atomics.md), atomic across
// ranks under every protocol.
//
// The service is the logic only: a word's operations are serialised by an
// address-named lock (the word's key: its 8-byte-aligned address), and the
// read-modify-write is an ordinary read and write of the bytes inside the
// lock. The lock is what makes it atomic and ordered under every protocol:
// an acquire makes the word (and whatever its last holders wrote before
// releasing it) current here, a release publishes it (hlrc: write notices;
// regc: the span's entries and rule 1 for the ordinary writes before it).
// So every operation is a seq_cst read-modify-write on its word, and a
// release/acquire pair on one word orders the plain data around it. The
// host (the runtime, or the simulator) provides the lock and the access;
// nothing here sends a message.
#pragma once
#include <cstddef>
#include <cstdint>

namespace agora {

enum class AtomicOp : uint8_t { Load, Store, Exchange, CompareExchange, Add, Sub, And, Or, Xor, Nand };

// One call. Buffers are the caller's, `size` bytes each.
struct AtomicCall {
  uintptr_t address = 0;
  uint32_t size = 0;  // arithmetic: 1, 2, 4, 8 or 16; the others: any
  AtomicOp op = AtomicOp::Load;
  const void *operand = nullptr;  // Store/Exchange: the value; CompareExchange: the desired; arithmetic: the operand
  void *expected = nullptr;       // CompareExchange: the expected value; on failure, set to the value found
  void *old = nullptr;            // Load, Exchange, arithmetic: the value before (may be null but for Load)
  void *updated = nullptr;        // arithmetic: the value after (the op_fetch forms; may be null)
};

class AtomicHost {
 public:
  virtual ~AtomicHost() = default;
  // An address-named lock: FIFO across the job, carrying consistency as any
  // lock does. 0 (AGORA_OK) or a negative status.
  virtual int lock_word(uint64_t key) = 0;
  virtual int unlock_word(uint64_t key) = 0;
  // Ordinary access to the word (inside its lock).
  virtual void read_word(uintptr_t address, void *out, size_t size) = 0;
  virtual void write_word(uintptr_t address, const void *in, size_t size) = 0;
};

class AtomicService {
 public:
  explicit AtomicService(AtomicHost &host) : host_(host) {}
  // The lock that serialises the word at `address`: overlapping atomics of
  // sizes up to 8 on one naturally aligned word share it.
  static uint64_t key_of(uintptr_t address) { return address & ~(uint64_t)7; }
  // Performs c under its word's lock. *exchanged: whether a CompareExchange
  // stored. 0 or the lock's negative status (nothing was done).
  int perform(const AtomicCall &c, bool *exchanged);
  // The operation's effect on the word, given its current bytes: fills the
  // call's results (old, updated, expected on a failed exchange; *exchanged)
  // and returns whether `next` must be written. What perform does between
  // the read and the write; the simulator drives it the same way.
  static bool decide(const AtomicCall &c, const void *current, void *next, bool *exchanged);
  // next = old OP operand, for the arithmetic ops. False for a size that is
  // not 1, 2, 4, 8 or 16, or an op that is not arithmetic.
  static bool combine(AtomicOp op, uint32_t size, const void *old, const void *operand, void *next);

 private:
  AtomicHost &host_;
};

// A spin-wait on an atomic load (`while (!atomic_load(&flag))`) would ask
// the word's lock on every turn. Each thread keeps one of these: when a
// load returns what the same thread's previous load of that word returned,
// the thread naps before the next one, longer the longer the value stays;
// any other load starts over. A value changed by another rank is then seen
// at most one nap late (kMaxNapUs).
class AtomicSpin {
 public:
  static constexpr uint32_t kFreeRepeats = 2;  // repeats before the first nap
  static constexpr uint32_t kMaxNapUs = 200;
  // The nap (µs) to take after a load of `size` bytes at `address` returned `value`.
  uint32_t after_load(uintptr_t address, const void *value, uint32_t size);
  // Any other operation on `address` ends a streak on it.
  void after_update(uintptr_t address) {
    if (address == address_) repeats_ = 0;
  }

 private:
  uintptr_t address_ = 0;
  uint64_t value_ = 0;
  uint32_t repeats_ = 0;
};

}  // namespace agora
