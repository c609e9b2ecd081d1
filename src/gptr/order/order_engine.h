// direct, ordernocache and ordercache (Themis section 2.2): one engine,
// three configurations.
//
//  direct        every access to another rank is a message; nothing is
//                cached or ordered beyond what the transport gives (MPI keeps
//                one pair's messages in order, which is what makes it correct
//                there; on a reordering network it is not, and the simulator
//                tester shows that).
//  ordernocache  the same messages, plus the "outstanding write" bit of
//                section 2.2.5 per line of a direct-mapped table: an access
//                whose line has one in flight waits for it, so one rank's
//                accesses to a location reach its home in program order on
//                any network.
//  ordercache    a write-back, direct-mapped cache of those lines (section
//                2.2.1): reads fill a whole line, writes stay in the line
//                until it is evicted, written through, or drained at a
//                release; an acquire drops the clean lines.
//
// Transfers larger than a line (bulk get/put) fence their home: the earlier
// accesses to it complete and its dirty lines are written back, the transfer
// goes in chunks of Options::chunk_bytes, and later accesses to that home
// wait until it is done (so per-location order holds across both paths).
#pragma once
#include <deque>
#include <unordered_map>
#include <vector>

#include "gptr/gptr_engine.h"

namespace agora::gptr {

class OrderEngine final : public Engine {
 public:
  OrderEngine(Host &host, const Options &options);
  Scheme scheme() const override { return options_.scheme; }
  bool try_now(const Op &op) override;
  void issue(const Op &op) override;
  void on_message(const MsgHeader &m, Payload p) override;
  void drain(std::function<void()> done) override;
  void acquire() override;
  bool idle() const override { return in_flight_ == 0 && queued_ == 0; }

 private:
  static constexpr uint64_t kNoTag = ~0ull;
  struct Line {
    uint64_t tag = kNoTag;  // home << kOffsetBits | line-aligned offset
    uint64_t valid = 0;     // bit i: byte i holds the home's value or this rank's write
    uint64_t dirty = 0;     // bit i: byte i written here and not yet written back
    bool busy = false;      // the outstanding bit: a message about this line is in flight
    std::vector<Queued> waiting;
  };
  struct HomeOrder {
    uint32_t in_flight = 0;  // scalar requests to this home outstanding
    uint32_t queued = 0;     // ops waiting on lines, bound for this home
    bool fenced = false;     // a bulk transfer owns the home
    bool bulk_sent = false;
    Queued bulk;
    std::deque<Queued> waiting;  // ops issued after the fence
  };
  enum class Start { Done, Sent, Wait, NeedSend };
  struct Pending {
    enum Kind : uint8_t { Fill, WriteBack, ScalarRead, ScalarWrite, Chunk } kind;
    uint32_t line = 0;
    uint64_t tag = 0;
    uint64_t epoch = 0;
    uint64_t op_offset = 0;  // Chunk: where in the op this chunk's bytes go
    bool has_op = false;
    Op op;
  };

  bool caching() const { return options_.scheme == Scheme::OrderCache; }
  bool ordered() const { return options_.scheme != Scheme::Direct; }
  bool scalar(const Op &op) const;
  uint32_t line_index(Rank home, uint64_t offset) const;
  uint64_t line_tag(Rank home, uint64_t offset) const {
    return make_pointer(home, offset & ~(uint64_t)(options_.line_bytes - 1));
  }
  std::byte *line_data(uint32_t i) { return &data_[(size_t)i * options_.line_bytes]; }

  Start start_scalar(Op &op, uint32_t idx, bool may_send);
  Start start_cached(Op &op, uint32_t idx, bool may_send);
  Start start_uncached(Op &op, uint32_t idx);
  void run_line(uint32_t idx);
  void dispatch(Queued q);
  void write_back(uint32_t idx, const Op *completes);
  // Bulk transfers and direct mode's accesses: chunks, completing op when all are back.
  void send_chunks(const Op &op);
  void try_send_bulk(Rank home);
  void bulk_done(Rank home);
  void refresh_cached(Rank home, const Op &op);
  void release_home(Rank home);
  uint64_t send_request(Rank home, uint16_t msg_op, uint64_t a, uint64_t b, Payload payload, Pending pending);
  void complete(const Op &op) { op.signal->complete(); }
  void check_drain();

  std::vector<Line> lines_;
  std::vector<std::byte> data_;
  std::vector<HomeOrder> homes_;
  std::unordered_map<uint64_t, Pending> pending_;
  std::unordered_map<uint64_t, uint32_t> chunks_left_;  // a chunked op's first request id -> chunks not back
  uint64_t next_id_ = 1;
  uint64_t epoch_ = 0;  // acquires so far: a fill from before one is not installed
  uint64_t in_flight_ = 0;
  uint64_t queued_ = 0;
  bool draining_ = false;
  std::function<void()> drained_;
};

}  // namespace agora::gptr
