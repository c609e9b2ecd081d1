// The runtime as the atomic service's host (sync/atomic_service.h): the
// word's lock is the address-named lock every protocol carries consistency
// with, and the access is a plain one (it faults and fetches as any access).
#include <cstring>

#include "runtime/runtime.h"

namespace agora {

namespace {
class RuntimeAtomicHost final : public AtomicHost {
 public:
  explicit RuntimeAtomicHost(Runtime &rt) : rt_(rt) {}
  int lock_word(uint64_t key) override { return rt_.lock(key); }
  int unlock_word(uint64_t key) override { return rt_.unlock(key); }
  // Word-sized accesses in one instruction, so that a thread of this rank
  // reading the word without the service (a plain read) never sees it torn.
  void read_word(uintptr_t address, void *out, size_t size) override {
    switch (aligned(address, size) ? size : 0) {
      case 1:
        read_as<uint8_t>(out, address);
        return;
      case 2:
        read_as<uint16_t>(out, address);
        return;
      case 4:
        read_as<uint32_t>(out, address);
        return;
      case 8:
        read_as<uint64_t>(out, address);
        return;
      default:
        std::memcpy(out, (const void *)address, size);
    }
  }
  void write_word(uintptr_t address, const void *in, size_t size) override {
    switch (aligned(address, size) ? size : 0) {
      case 1:
        write_as<uint8_t>(address, in);
        return;
      case 2:
        write_as<uint16_t>(address, in);
        return;
      case 4:
        write_as<uint32_t>(address, in);
        return;
      case 8:
        write_as<uint64_t>(address, in);
        return;
      default:
        std::memcpy((void *)address, in, size);
    }
  }

 private:
  static bool aligned(uintptr_t address, size_t size) { return size && (address & (size - 1)) == 0; }
  template <typename T>
  static void read_as(void *out, uintptr_t address) {
    T v = __atomic_load_n((const T *)address, __ATOMIC_RELAXED);
    std::memcpy(out, &v, sizeof v);
  }
  template <typename T>
  static void write_as(uintptr_t address, const void *in) {
    T v;
    std::memcpy(&v, in, sizeof v);
    __atomic_store_n((T *)address, v, __ATOMIC_RELAXED);
  }
  Runtime &rt_;
};
}  // namespace

int Runtime::atomic(const AtomicCall &c, bool *exchanged) {
  RuntimeAtomicHost host(*this);
  return AtomicService(host).perform(c, exchanged);
}

}  // namespace agora
