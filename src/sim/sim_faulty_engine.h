// An engine that forwards to another one but for one injected fault, handed
// to a single service of a simulated node (SimOptions::ServiceFault) so that a
// tester can show it notices when that service's consistency is broken. Every
// hook is forwarded: add new ProtocolEngine hooks here too.
#pragma once
#include "protocol/engine.h"

namespace agora {

class SimFaultyEngine final : public ProtocolEngine {
 public:
  enum class Fault { AcquireIgnoresInfo, ReleasePublishesNothing };
  SimFaultyEngine(ProtocolEngine &inner, Fault fault) : inner_(inner), fault_(fault) {}

  const char *name() const override { return inner_.name(); }
  void on_fault(PageId page, Access need, Waiter *w) override { inner_.on_fault(page, need, w); }
  void on_message(const MsgHeader &m, Payload p) override { inner_.on_message(m, p); }
  void on_remote_read(Rank home, PageId first, uint32_t count, Payload meta, Payload pages) override {
    inner_.on_remote_read(home, first, count, meta, pages);
  }
  Access local_access(PageId page) const override { return inner_.local_access(page); }
  Access home_access() const override { return inner_.home_access(); }
  bool carries_consistency() const override { return inner_.carries_consistency(); }
  void release(std::function<void()> published) override {
    if (fault_ == Fault::ReleasePublishesNothing)
      published();
    else
      inner_.release(std::move(published));
  }
  void acquirer_view(std::vector<std::byte> *out) override { inner_.acquirer_view(out); }
  void release_info(Payload view, std::vector<std::byte> *out) override { inner_.release_info(view, out); }
  void acquire(Payload info) override { inner_.acquire(fault_ == Fault::AcquireIgnoresInfo ? Payload{} : info); }
  void barrier_arrive(uint64_t epoch, std::function<void()> published) override {
    inner_.barrier_arrive(epoch, std::move(published));
  }
  void barrier_info(uint64_t epoch, std::vector<std::byte> *out) override { inner_.barrier_info(epoch, out); }
  void barrier_receive(uint64_t epoch, Payload info) override { inner_.barrier_receive(epoch, info); }
  void barrier_complete(uint64_t epoch) override { inner_.barrier_complete(epoch); }
  void span_begin(uint64_t lock, std::function<void()> ready) override { inner_.span_begin(lock, std::move(ready)); }
  void span_end(uint64_t lock, const std::vector<StoreRange> *stores) override { inner_.span_end(lock, stores); }
  void lock_release(uint64_t lock, std::function<void()> published) override {
    inner_.lock_release(lock, std::move(published));
  }
  void lock_release_info(uint64_t lock, Payload view, std::vector<std::byte> *out) override {
    inner_.lock_release_info(lock, view, out);
  }
  void lock_acquire(uint64_t lock, Payload info) override { inner_.lock_acquire(lock, info); }
  void forget_pages(PageId first, PageId count, std::vector<uint32_t> *floor) override {
    inner_.forget_pages(first, count, floor);
  }
  void raise_page_floor(const std::vector<uint32_t> &floor) override { inner_.raise_page_floor(floor); }

 private:
  ProtocolEngine &inner_;
  Fault fault_;
};

}  // namespace agora
