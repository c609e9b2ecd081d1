// The runtime's side of doorbells (Doorbells, doorbells/doorbells.h): the
// DoorbellsHost they reach the rank through. The start-up exchange is an
// MPI collective, serialised under the runtime's lock like every MPI call.
#include "runtime/runtime.h"

namespace agora {

class Runtime::DoorbellsSide final : public DoorbellsHost {
 public:
  explicit DoorbellsSide(Runtime &rt) : rt_(rt) {}
  Rank rank() const override { return rt_.rank(); }
  Rank nranks() const override { return rt_.nranks(); }
  bool same_node(Rank rank) const override { return rt_.transport_.same_node(rank); }
  std::vector<uint64_t> allgather(const std::vector<uint64_t> &mine) override {
    std::lock_guard<std::mutex> g(rt_.lock_);  // MPI is serialised under the lock
    return rt_.transport_.allgather(mine);
  }
  Stats &stats() override { return rt_.stats_; }

 private:
  Runtime &rt_;
};

std::unique_ptr<DoorbellsHost> Runtime::make_doorbells_host(Runtime &rt) { return std::make_unique<DoorbellsSide>(rt); }

}  // namespace agora
