// The runtime's side of global pointers (GlobalPointers,
// global_pointers/global_pointers.h): the GlobalPointersHost they reach the
// rank through. Waits are noted for the hang watch as WaitKind::Gptr;
// the allocation check is a reduction over the program's ranks.
#include "runtime/runtime.h"

namespace agora {

class Runtime::GlobalPointersSide final : public GlobalPointersHost {
 public:
  explicit GlobalPointersSide(Runtime &rt) : rt_(rt) {}
  Rank rank() const override { return rt_.rank(); }
  Rank nranks() const override { return rt_.compute_nranks(); }
  void send(Rank dst, MsgHeader header, Payload payload) override { rt_.send(dst, header, payload); }
  void send_request(Rank dst, MsgHeader header, Payload payload) override { rt_.send_request(dst, header, payload); }
  Stats &stats() override { return rt_.stats_; }
  std::mutex &runtime_lock() override { return rt_.lock_; }
  int wait(uint64_t a, uint64_t b, Waiter &w, const std::function<int()> &start) override {
    WaitNote note{WaitKind::Gptr, a, b};
    return rt_.noted_wait(note, w, start);
  }
  void reduce_max(std::vector<int64_t> *v) override {
    rt_.reduce(v->data(), v->size(), ReduceType::Int64, ReduceOp::Max, CollectiveKind::GptrAlloc);
  }
  std::byte *segment_alloc(uint64_t bytes, std::string *error) override {
    return platform::lazy_zero_alloc(bytes, error);
  }

 private:
  Runtime &rt_;
};

std::unique_ptr<GlobalPointersHost> Runtime::make_gptr_host(Runtime &rt) {
  return std::make_unique<GlobalPointersSide>(rt);
}

}  // namespace agora
