#include "options_text.h"

#include <cstdio>
#include <string_view>

#include "common/config.h"
#include "common/options.h"

namespace agora {

namespace {
constexpr size_t kHelpWidth = 79;
constexpr size_t kHelpIndent = 27;  // where the flag's description starts

// `words` broken into lines of at most `width`, the first after `first`
// (padded to `indent`), the others indented by `indent`.
std::string wrapped(const std::string &first, const std::string &words, size_t indent, size_t width) {
  std::string out = first;
  if (out.size() + 1 > indent)
    out.append(1, '\n').append(indent, ' ');
  else
    out.append(indent - out.size(), ' ');
  size_t column = indent;
  size_t start = 0;
  while (start < words.size()) {
    size_t end = words.find(' ', start);
    if (end == std::string::npos) end = words.size();
    std::string_view word = std::string_view(words).substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (column > indent && column + 1 + word.size() > width) {
      out.append(1, '\n').append(indent, ' ');
      column = indent;
    }
    if (column > indent) out += ' ', ++column;
    out += word;
    column += word.size();
  }
  return out + "\n";
}

std::string flag_kind(const OptionSpec &spec) {
  switch (spec.kind) {
    case OptionKind::Bool:
      return "switch";
    case OptionKind::Count:
      return std::string("number a whole number of ") + spec.what;
    case OptionKind::Signal:
      return "number a signal number";
    default:
      return "value";
  }
}

std::string markdown_cell(const std::string &text) {
  std::string out;
  for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

std::string code(const std::string &text) { return text.empty() ? "" : "`" + text + "`"; }

// The variable's current value: its text, or the default's when unset.
struct Current {
  std::string value;
  OptionSource source;
  std::string error;  // a bad value's message
};
Current current(const OptionSpec &spec, const std::vector<std::string> &protocols) {
  Current c{spec.default_text, option_source(spec), ""};
  if (const char *text = option_env(spec)) {
    c.value = text;
    OptionValue parsed;
    option_parse(spec, text, protocols, &parsed, &c.error);
  }
  return c;
}
}  // namespace

std::string json_string(const std::string &text) {
  std::string out = "\"";
  for (unsigned char ch : text) {
    if (ch == '"' || ch == '\\')
      out += '\\', out += (char)ch;
    else if (ch == '\n')
      out += "\\n";
    else if (ch < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", ch);
      out += escaped;
    } else
      out += (char)ch;
  }
  return out + "\"";
}

std::string options_flag_lines() {
  std::string out;
  for (const OptionSpec &spec : option_table())
    if (spec.flag) out += std::string(spec.flag) + " " + spec.variable + " " + flag_kind(spec) + "\n";
  return out;
}

std::string options_help(const std::vector<std::string> &protocols) {
  std::string out;
  std::string no_flag;
  for (const OptionSpec &spec : option_table()) {
    if (!spec.flag) {
      no_flag += (no_flag.empty() ? "" : ", ") + std::string(spec.variable);
      continue;
    }
    std::string head = std::string("  ") + spec.flag;
    std::string tail;
    if (spec.kind == OptionKind::Bool) {
      tail = std::string(spec.variable) + "=1";
    } else {
      head += std::string(" ") + spec.value_name;
      tail = spec.variable;
      if (*spec.default_text) tail += std::string("; default ") + spec.default_text;
      if (spec.kind != OptionKind::String && spec.kind != OptionKind::Signal)
        tail += "; allowed " + option_allowed_text(spec, protocols);
    }
    out += wrapped(head, std::string(spec.doc) + " (" + tail + ")", kHelpIndent, kHelpWidth);
  }
  out += wrapped("",
                 "Variables with no flag (set in the environment): " + no_flag +
                     ". agora-info describes every variable and shows its current value and "
                     "where it came from.",
                 2, kHelpWidth);
  return out;
}

std::string options_markdown(const std::vector<std::string> &protocols) {
  std::string out =
      "| Variable | agorarun flag | Default | Allowed | Read by | What it does |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  for (const OptionSpec &spec : option_table()) {
    std::string flag =
        spec.flag
            ? code(std::string(spec.flag) + (spec.kind == OptionKind::Bool ? "" : std::string(" ") + spec.value_name))
            : "";
    std::string doc = spec.doc;
    if (*spec.more) doc += "; " + std::string(spec.more);
    std::string allowed = option_allowed_text(spec, protocols);
    if (spec.kind == OptionKind::Choice || spec.kind == OptionKind::Protocol) {
      std::string words;
      for (size_t start = 0; start < allowed.size();) {
        size_t end = allowed.find(", ", start);
        if (end == std::string::npos) end = allowed.size();
        words += (words.empty() ? "" : ", ") + code(allowed.substr(start, end - start));
        start = end + 2;
      }
      allowed = words;
    } else if (spec.kind == OptionKind::Size || spec.kind == OptionKind::Bool) {
      allowed = spec.kind == OptionKind::Bool ? "`1` or `0`" : code(allowed);
    }
    std::string default_text =
        spec.kind == OptionKind::Signal ? std::string(spec.default_text) : code(spec.default_text);
    out += "| " + code(spec.variable) + " | " + flag + " | " + markdown_cell(default_text) + " | " +
           markdown_cell(allowed) + " | " + markdown_cell(spec.read_by) + " | " + markdown_cell(doc) + " |\n";
  }
  return out;
}

std::string options_listing(const std::vector<std::string> &protocols) {
  std::string out;
  char line[512];
  for (const OptionSpec &spec : option_table()) {
    Current c = current(spec, protocols);
    std::string source = "[";
    source += option_source_name(c.source);
    source += ']';
    std::snprintf(line, sizeof line, "  %-24s %-13s %-20s %s\n", spec.variable, source.c_str(),
                  spec.flag ? spec.flag : "", c.value.empty() ? "(unset)" : c.value.c_str());
    out += line;
    if (!c.error.empty()) out += "      bad value: " + c.error + "\n";
  }
  return out;
}

std::string options_json(const std::vector<std::string> &protocols) {
  std::string out = "[";
  bool first = true;
  for (const OptionSpec &spec : option_table()) {
    Current c = current(spec, protocols);
    out += std::string(first ? "" : ",") + "\n    {\"variable\": " + json_string(spec.variable) +
           ", \"flag\": " + (spec.flag ? json_string(spec.flag) : "null") +
           ", \"default\": " + json_string(spec.default_text) +
           ", \"allowed\": " + json_string(option_allowed_text(spec, protocols)) +
           ", \"read_by\": " + json_string(spec.read_by) + ", \"doc\": " + json_string(spec.doc) +
           ", \"value\": " + json_string(c.value) + ", \"source\": " + json_string(option_source_name(c.source)) +
           ", \"error\": " + (c.error.empty() ? "null" : json_string(c.error)) + "}";
    first = false;
  }
  return out + "\n  ]";
}

}  // namespace agora
