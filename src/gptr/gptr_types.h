// Vocabulary of the global-pointer layer (Themis and SWCC Split-C): what an
// operation is, how its completion is counted, the schemes and their knobs.
// Nothing here calls MPI or the OS.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/types.h"
#include "transport/message.h"

namespace agora::gptr {

// A global pointer: the home rank in the top 16 bits, the byte offset in that
// rank's global-pointer segment in the low 48 (include/agora/gptr.h).
constexpr int kOffsetBits = 48;
constexpr uint64_t kOffsetMask = (1ull << kOffsetBits) - 1;
inline uint64_t make_pointer(Rank home, uint64_t offset) { return (uint64_t)home << kOffsetBits | offset; }
inline Rank pointer_home(uint64_t g) { return (Rank)(g >> kOffsetBits); }
inline uint64_t pointer_offset(uint64_t g) { return g & kOffsetMask; }

// A completion signal (Themis section 2.1): the operations counted on it
// that have not completed; the thread waiting for zero, if any. Changed only
// under the engine's lock.
struct Signal {
  // Set by construction (agora_gptr_signal_init): a signal whose word is
  // neither this nor zero (a zero-filled one is valid, as for pthreads) was
  // never initialised, and its other fields are garbage.
  static constexpr uint64_t kMagic = 0x61676f7261736967ull;  // "agorasig"
  int64_t pending = 0;
  Waiter *waiter = nullptr;
  uint64_t magic = kMagic;
  void issue(int64_t n = 1) { pending += n; }
  void complete(int64_t n = 1) {
    pending -= n;
    if (pending == 0 && waiter) {
      Waiter *w = waiter;
      waiter = nullptr;
      w->complete(0);
    }
  }
};

enum class OpKind : uint8_t { Read, Write, Store };

// One access as the program issued it. `local` is where a read's bytes go
// (written when it completes) or a write's bytes come from (copied at issue).
// `signal` (never null) counts it until it completes: a read once its bytes
// are in `local`; a write or store once later accesses of this rank are sure
// to see it (for the caching schemes that is at issue; other ranks see it
// after this rank's next barrier or lock release).
struct Op {
  OpKind kind = OpKind::Read;
  Rank home = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  std::byte *local = nullptr;
  Signal *signal = nullptr;
  // A write completes only once performed at the home (a blocking write, a
  // put the caller will sync): the caching schemes write the line through.
  bool write_through = false;
};

enum class Scheme : uint8_t { Direct, OrderNoCache, OrderCache, Sequencer, Swcc };
const char *scheme_name(Scheme s);
bool scheme_from_name(const std::string &name, Scheme *out);

// Faults injected into the schemes, to show the simulator tester catches
// them (tests/sim/sim_gptr_test.cpp).
enum class Mutation : uint8_t {
  None,
  NoOutstandingWriteBit,   // ordercache/ordernocache: a write to a line with one in flight does not stall
  NoReorderBuffer,         // sequencer: requests applied in arrival order
  SwccAckInvalidateEarly,  // swcc: an invalidation reaching a copy still on its way is acknowledged
};

struct Options {
  Scheme scheme = Scheme::OrderCache;
  // ordercache/ordernocache: a direct-mapped table of 2^(rank_bits+addr_bits)
  // lines of line_bytes (Themis section 2.2.6: the index is the low rank
  // bits over the low line-address bits).
  uint32_t line_bytes = 64;
  uint32_t rank_bits = 2;
  uint32_t addr_bits = 10;
  // swcc: coherence block and the directory hash's index bits (SWCC Split-C).
  uint32_t block_bytes = 64;
  uint32_t dir_bits = 12;
  // Largest payload of one message of a bulk transfer.
  uint32_t chunk_bytes = 32u << 10;
  Mutation mutation = Mutation::None;
};

// What an engine counts (agora_gptr_stats). Exact, machine-independent.
struct Counters {
  uint64_t reads = 0, writes = 0, stores = 0;     // operations issued
  uint64_t local = 0;                             // ... served from this rank's own segment
  uint64_t hits = 0, misses = 0;                  // caching schemes: scalar accesses to other ranks
  uint64_t stalls = 0;                            // an access waited for an earlier one on its line/block
  uint64_t write_backs = 0;                       // ordercache: dirty lines written back
  uint64_t requests = 0;                          // request messages sent
  uint64_t bytes_fetched = 0, bytes_written = 0;  // data moved by requests and replies
  uint64_t nacks = 0;                             // swcc: requests refused by a busy home or early copy
  uint64_t invalidations = 0, recalls = 0;        // swcc: sent by this rank as a home
  uint64_t out_of_order = 0;                      // sequencer: requests that arrived early
  uint64_t reorder_depth_max = 0;                 // sequencer: deepest reorder buffer seen
  uint64_t stored_bytes_in = 0;                   // one-way stores received
};

// Message operations on Channel::Gptr.
enum MsgOp : uint16_t {
  kReadReq = 1,  // a=offset b=size c=request id (sequencer: b high half = sequence)
  kReadReply,    // c=request id, payload = bytes
  kWriteReq,     // a=offset b=size (or line mask) c=request id, payload = bytes
  kWriteAck,     // c=request id
  kStoreReq,     // as kWriteReq; the home counts the bytes for store_sync
  // swcc (SWCC Split-C): a=block offset, b=request id
  kSwccRead,   // want shared
  kSwccWrite,  // want modified
  kSwccStore,  // a=offset within segment, b=size|id<<32, payload: the home writes it
  kSwccGrant,  // c=state granted, payload = the block
  kSwccNack,   // the home was busy: retry
  kSwccInvalidate,
  kSwccInvalidateAck,  // c=1: refused (a copy on its way): the home retries
  kSwccRecall,         // c=1: exclusive (give it up), 0: keep a shared copy
  kSwccRecallReply,    // c=1: refused; payload = the block
  kSwccStoreAck,
  kSwccReadRun,  // a bulk transfer's consecutive blocks: a=first block offset b=count
  kSwccWriteRun,
  kSwccGrantRun,      // a=first block offset b=mask of the blocks granted c=state | count<<8, payload = them in order
  kSwccWriteBack,     // a release: the owner's modified blocks, a=first b=count, payload = them in order
  kSwccWriteBackAck,  // b=mask of those kept (the owner now shares them; the others were recalled meanwhile) c=count
};

}  // namespace agora::gptr
