// All-reduce: every rank sends its contribution to rank 0, which combines
// them in rank order (so every rank gets bit-identical results, whatever the
// arrival order) and sends the result back.
#pragma once
#include <map>
#include <vector>

#include "transport/message.h"

namespace agora {

enum class ReduceType : uint8_t { Int64 = 0, Double = 1 };
enum class ReduceOp : uint8_t { Sum = 0, Min = 1, Max = 2 };

class ReduceService {
 public:
  explicit ReduceService(ComponentHost &host) : host_(host) {}
  // data: count elements of type; overwritten with the result before *w completes.
  void start(void *data, size_t count, ReduceType type, ReduceOp op, Waiter *w);
  void on_message(const MsgHeader &m, Payload p);

 private:
  enum Op : uint16_t { kContribute = 1, kResult = 2 };
  void root_add(uint64_t epoch, Rank from, Payload p);
  void deliver(Payload result);

  ComponentHost &host_;
  uint64_t epoch_ = 0;
  void *data_ = nullptr;
  size_t count_ = 0;
  ReduceType type_{};
  ReduceOp op_{};
  Waiter *waiter_ = nullptr;
  // root only: epoch -> contributions indexed by rank (may run ahead of epoch_)
  std::map<uint64_t, std::vector<std::vector<std::byte>>> contributions_;
  std::map<uint64_t, unsigned> received_;
};

}  // namespace agora
