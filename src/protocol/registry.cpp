#include "protocol/engine.h"
#include "protocol/hlrc/hlrc_engine.h"
#include "protocol/regc/regc_engine.h"
#include "protocol/sc/sc_engine.h"

namespace agora {

std::vector<std::string> protocol_names() { return {"sc", "hlrc", "regc", "regc-page"}; }

std::unique_ptr<ProtocolEngine> protocol_create(const std::string &name, EngineHost &host,
                                                const EngineOptions &options) {
  if (name == "sc") return std::make_unique<ScEngine>(host, options);
  if (name == "hlrc") return std::make_unique<HlrcEngine>(host, options);
  if (name == "regc") return std::make_unique<RegcEngine>(host, RegcEngine::SpanStores::Updates, options);
  if (name == "regc-page") return std::make_unique<RegcEngine>(host, RegcEngine::SpanStores::Notices, options);
  return nullptr;
}

}  // namespace agora
