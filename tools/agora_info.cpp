// agora-info: what this Agora is and how it is configured, like ompi_info:
// version, build options, protocols, and every AGORA_* variable with its
// current value and where it came from. Also prints the renderings of the
// options table that agorarun and README use. Links no MPI: it runs anywhere
// (it loads the MPI library only to print its version).
#include <agora/agora.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "agora_info_build.h"
#include "common/config.h"
#include "mpi_library_version.h"
#include "options_text.h"
#include "protocol/engine.h"

namespace {

void usage(FILE *to) {
  std::fputs(
      "usage: agora-info [OPTION]\n"
      "\n"
      "With no option: Agora's version, build options, protocols, and every AGORA_*\n"
      "variable with its current value and where it came from (default, environment,\n"
      "or a flag of agorarun). A bad value is reported, not fatal.\n"
      "\n"
      "  --json           the same as JSON\n"
      "  --markdown       the options table of README.md\n"
      "  --options-help   the options section of agorarun --help\n"
      "  --flags          agorarun's flags: FLAG VARIABLE switch|value|number [WHAT]\n"
      "  --version        print the version and exit\n"
      "  -h, --help       this text\n",
      to);
}

std::string joined(const std::vector<std::string> &words) {
  std::string text;
  for (const auto &w : words) text += (text.empty() ? "" : ", ") + w;
  return text;
}

void print_listing(const std::vector<std::string> &protocols) {
  std::printf("Agora %s\n", AGORA_VERSION_STRING);
  std::printf("  build type    %s\n", kAgoraBuildType);
  std::printf("  compiler      %s\n", kAgoraCompiler);
  std::printf("  AGORA_CHECKS  %s\n", kAgoraChecks);
  std::printf("  MPI (build)   %s\n", kAgoraMpi);
  std::printf("  MPI library   %s (%s)\n", agora::mpi_library_version(kAgoraMpiLibraryFile).c_str(),
              kAgoraMpiLibraryFile);
  std::printf("  MPI launcher  %s\n", *kAgoraMpiLauncher ? kAgoraMpiLauncher : "(none found at build time)");
  std::printf("  protocols     %s\n", joined(protocols).c_str());
  std::printf("\nVariables (where the value came from, agorarun flag, value):\n");
  std::fputs(agora::options_listing(protocols).c_str(), stdout);
  for (const std::string &message : agora::config_unknown_variables()) std::printf("  %s\n", message.c_str());
}

void print_json(const std::vector<std::string> &protocols) {
  using agora::json_string;
  std::string names;
  for (const auto &p : protocols) names += (names.empty() ? "" : ", ") + json_string(p);
  std::string unknown;
  for (const auto &m : agora::config_unknown_variables()) unknown += (unknown.empty() ? "" : ", ") + json_string(m);
  std::printf(
      "{\n  \"version\": %s,\n  \"build\": {\"type\": %s, \"compiler\": %s, \"checks\": %s, \"mpi\": %s, "
      "\"mpi_vendor\": %s, \"mpi_library\": %s, \"mpi_launcher\": %s},\n"
      "  \"protocols\": [%s],\n  \"options\": %s,\n  \"unknown_variables\": [%s]\n}\n",
      json_string(AGORA_VERSION_STRING).c_str(), json_string(kAgoraBuildType).c_str(),
      json_string(kAgoraCompiler).c_str(), json_string(kAgoraChecks).c_str(), json_string(kAgoraMpi).c_str(),
      json_string(kAgoraMpiVendor).c_str(), json_string(agora::mpi_library_version(kAgoraMpiLibraryFile)).c_str(),
      json_string(kAgoraMpiLauncher).c_str(), names.c_str(), agora::options_json(protocols).c_str(), unknown.c_str());
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::string> protocols = agora::protocol_names();
  if (argc > 2) {
    std::fprintf(stderr, "agora-info: one option at most; see agora-info --help\n");
    return 2;
  }
  std::string option = argc == 2 ? argv[1] : "";
  if (option.empty())
    print_listing(protocols);
  else if (option == "--json")
    print_json(protocols);
  else if (option == "--markdown")
    std::fputs(agora::options_markdown(protocols).c_str(), stdout);
  else if (option == "--options-help" || option == "--agorarun-help")
    std::fputs(agora::options_help(protocols).c_str(), stdout);
  else if (option == "--flags")
    std::fputs(agora::options_flag_lines().c_str(), stdout);
  else if (option == "--version")
    std::printf("agora-info (Agora) %s\n", AGORA_VERSION_STRING);
  else if (option == "-h" || option == "--help")
    usage(stdout);
  else {
    std::fprintf(stderr, "agora-info: unknown option %s; see agora-info --help\n", option.c_str());
    return 2;
  }
  return 0;
}
