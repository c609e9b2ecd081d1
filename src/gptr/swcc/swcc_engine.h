// swcc (SWCC Split-C): directory-based MSI coherence at a configurable block
// size. Every block has its home (the global pointer's rank); the home keeps
// the copyset of the ranks that hold it (its "user vector") and serialises
// requests with busy states, refusing (NACK) a request that finds its block
// busy; the requester retries. Because the network may reorder one pair's
// messages (the simulator does), a rank refuses an invalidation or a recall
// that reaches it before the grant it concerns, and the home sends it again.
//
// The owner-computes optimisation (section 2.3): a home makes no directory
// entry for its own block until another rank asks for it, so until then its
// own accesses go straight to its segment. The home's segment is its copy of
// the block (no second copy in the entry: Agora's segment holds only global
// data, so the paper's reason for copying does not apply).
//
// Coherence makes every access see the latest write to its block, so an
// acquire drops nothing. A drain (a release: barrier, unlock) waits for this
// rank's accesses in flight and also writes its modified copies back, keeping
// them shared: after a barrier every home's segment holds its blocks' latest
// values, so a rank may read its own memory through a local pointer
// (agora_gptr_to_local) as under the other schemes.
//
// Files: swcc_requester.cpp (this rank's copies of other ranks' blocks and the
// operations of the program), swcc_home.cpp (the directory of this rank's
// blocks: transactions, invalidations, recalls).
#pragma once
#include <deque>
#include <vector>

#include "gptr/gptr_engine.h"
#include "gptr/swcc/swcc_directory.h"

namespace agora::gptr {

class SwccEngine final : public Engine {
 public:
  SwccEngine(Host &host, const Options &options);
  Scheme scheme() const override { return Scheme::Swcc; }
  bool try_now(const Op &op) override;
  void issue(const Op &op) override;
  void on_message(const MsgHeader &m, Payload p) override;
  void drain(std::function<void()> done) override;
  bool idle() const override { return open_ == 0; }

 private:
  enum class State : uint8_t { Invalid, Shared, Modified };
  // A copy of another rank's block (a directory entry at a local node).
  struct Copy {
    Rank home = 0;
    uint64_t block = 0;  // block number
    Copy *next = nullptr;
    State state = State::Invalid;
    bool requesting = false;  // one request (or a write-back) per block on its way
    bool writing_back = false;
    std::vector<std::byte> data;
    std::deque<Queued> waiting;  // this rank's accesses, in program order; the first made the request
  };
  // The home's entry for one of its blocks another rank has asked for.
  struct Entry {
    Rank home = 0;
    uint64_t block = 0;
    Entry *next = nullptr;
    State state = State::Invalid;  // Invalid here: no other rank holds it
    std::vector<Rank> sharers;     // Shared: ranks with a copy (never the home)
    Rank owner = -1;               // Modified: the rank holding it
    // The transaction that makes it busy.
    bool busy = false;
    enum class Want : uint8_t { Read, Write, Store, LocalRead, LocalWrite } want = Want::Read;
    Rank requester = -1;
    uint32_t acks_left = 0;
    std::vector<std::byte> store;  // a store's bytes, applied when the transaction ends
    uint64_t store_offset = 0;
    std::deque<Queued> local_waiting;  // the home's own accesses behind the transaction
  };

  // Block sizes are powers of two: shifts, not divisions, on the hit path.
  uint64_t block_of(uint64_t offset) const { return offset >> block_shift_; }
  uint64_t block_offset(uint64_t block) const { return block << block_shift_; }
  std::byte *home_block(uint64_t block) { return host_.segment() + block_offset(block); }
  // Splits op into one access per block it touches (signal counted for the extra ones).
  template <typename Fn>
  void for_each_block(const Op &op, Fn fn);

  // ---- requester (swcc_requester.cpp) ----
  bool copy_serves(const Op &op, const Copy &c) const;
  void serve_from_copy(const Op &op, Copy &c);
  void run_copy(Copy &c);
  void send_for(Copy &c, const Queued &q);
  void on_grant(const MsgHeader &m, Payload p);
  // A bulk transfer asks for consecutive blocks it lacks in one request; the
  // home grants those it can at once, the others are asked for one by one.
  void on_grant_run(const MsgHeader &m, Payload p);
  void on_nack(const MsgHeader &m);
  void on_store_ack(const MsgHeader &m);
  void on_invalidate(const MsgHeader &m);
  void on_recall(const MsgHeader &m);
  void write_back_all();
  void check_drained();
  void on_write_back_ack(const MsgHeader &m);

  // ---- home (swcc_home.cpp) ----
  bool home_allows(const Op &op, const Entry *e) const;
  void run_home(Entry &e);
  void on_request(const MsgHeader &m, Payload p);
  void on_run(const MsgHeader &m);
  // Starts what makes e ready for `want` by `requester` (invalidations or a
  // recall), or finishes at once when nothing is in the way.
  void begin(Entry &e, Entry::Want want, Rank requester);
  void on_invalidate_ack(const MsgHeader &m);
  void on_recall_reply(const MsgHeader &m, Payload p);
  void on_write_back(const MsgHeader &m, Payload p);
  void finish(Entry &e);
  void grant(Rank to, uint64_t block, State state);

  void opened() { open_++; }
  void closed();

  // Runs (of a bulk transfer's requests, of a release's write-backs) in
  // flight at once: the rest wait here, so that a transfer of many blocks
  // does not put thousands of messages in flight (the transport tests each
  // outstanding send on every poll).
  static constexpr size_t kRunsInFlight = 8;
  struct Run {
    std::vector<Copy *> copies;
    bool write;       // a request: for modified copies
    bool write_back;  // a release's write-back
  };
  void start_run(Run run);
  void send_run_now(const Run &run);
  void run_finished();
  size_t runs_in_flight_ = 0;
  std::deque<Run> runs_waiting_;

  const uint32_t block_shift_ = (uint32_t)__builtin_ctz(options_.block_bytes);
  SwccDirectory<Copy> copies_;
  SwccDirectory<Entry> entries_;
  uint64_t open_ = 0;  // accesses waiting or in flight
  std::function<void()> drained_;
};

}  // namespace agora::gptr
