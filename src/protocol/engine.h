// The interface every coherence protocol implements, and what it may ask of
// the layers below. An engine is a single-threaded state machine: the host
// calls it under the host's lock, and it never blocks, never calls MPI or the
// OS. Both the runtime (real ranks) and the simulator (virtual nodes) host it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "common/types.h"
#include "transport/message.h"

namespace agora {

class EngineHost : public ComponentHost {
 public:
  virtual size_t page_size() const = 0;
  // Protection of this rank's application view of the page.
  virtual void set_access(PageId page, Access access) = 0;
  // This rank's copy of the page, always readable and writable by the engine.
  virtual std::byte *frame(PageId page) = 0;
  virtual Rank home_of(PageId page) const = 0;
  // At the home: is the page part of a live allocation? (Catches accesses to
  // freed or never-allocated memory in another rank's arena.)
  virtual bool page_allocated(PageId page) const = 0;
};

class ProtocolEngine {
 public:
  virtual ~ProtocolEngine() = default;
  virtual const char *name() const = 0;
  // A thread of this rank touched `page` and needs `need`; complete *w when
  // the access may be retried (status 0) or must fail (negative status).
  virtual void on_fault(PageId page, Access need, Waiter *w) = 0;
  virtual void on_message(const MsgHeader &m, Payload p) = 0;
  // The access the engine currently grants this rank (for checks and tests).
  virtual Access local_access(PageId page) const = 0;
};

// Names of the protocols this build provides, for configuration errors.
std::vector<std::string> protocol_names();
// nullptr if the name is unknown.
std::unique_ptr<ProtocolEngine> protocol_create(const std::string &name, EngineHost &host);

}  // namespace agora
