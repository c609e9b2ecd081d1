#include "protocol/engine.h"
#include "protocol/sc/sc_engine.h"

namespace agora {

std::vector<std::string> protocol_names() { return {"sc"}; }

std::unique_ptr<ProtocolEngine> protocol_create(const std::string &name, EngineHost &host) {
  if (name == "sc") return std::make_unique<ScEngine>(host);
  return nullptr;
}

}  // namespace agora
