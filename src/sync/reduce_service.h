// All-reduce: every rank sends its contribution to rank 0, which combines
// them in rank order (so every rank gets bit-identical results, whatever the
// arrival order) and sends the result back. The root checks that every rank
// passed the same count, type and operation, and ends the job naming both
// sides if not (a mismatch would otherwise return garbage).
#pragma once
#include <map>
#include <vector>

#include "sync/collective_ledger.h"
#include "transport/message.h"

namespace agora {

enum class ReduceType : uint8_t { Int64 = 0, Double = 1 };
enum class ReduceOp : uint8_t { Sum = 0, Min = 1, Max = 2 };

class ReduceService {
 public:
  explicit ReduceService(ComponentHost &host) : host_(host) {}
  void attach(CollectiveLedger *ledger) { ledger_ = ledger; }
  // Largest count a reduce may have (its bytes travel in one message).
  static constexpr size_t kMaxCount = (1u << 28) - 64;
  // data: count elements of type; overwritten with the result before *w
  // completes. Returns AGORA_ERR_MISUSE, without starting, if a thread
  // of this rank is already in a reduce.
  int start(void *data, size_t count, ReduceType type, ReduceOp op, Waiter *w, uint64_t tag = 0);
  bool waiting() const { return waiter_ != nullptr; }
  void on_message(const MsgHeader &m, Payload p);

 private:
  enum Op : uint16_t { kContribute = 1, kResult = 2 };
  struct Contribution {
    uint64_t shape = 0;  // count, type and op, as encoded by shape_of
    std::vector<std::byte> data;
  };
  uint64_t shape_of(size_t count, ReduceType type, ReduceOp op) const;
  void root_add(uint64_t epoch, Rank from, uint64_t shape, Payload p);
  void check_shapes(const std::vector<Contribution> &slots) const;
  void deliver(Payload result);

  ComponentHost &host_;
  CollectiveLedger *ledger_ = nullptr;
  uint64_t tag_ = 0;
  uint64_t epoch_ = 0;
  void *data_ = nullptr;
  size_t count_ = 0;
  ReduceType type_{};
  ReduceOp op_{};
  Waiter *waiter_ = nullptr;
  // root only: epoch -> contributions indexed by rank (may run ahead of epoch_)
  std::map<uint64_t, std::vector<Contribution>> contributions_;
  std::map<uint64_t, unsigned> received_;
};

}  // namespace agora
