// wgx options: the runtime options' table (runtime/options.h): each option's name, kind,
// default, values, whether it can change results, what it is for, and a line of doc. Needs no
// device.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "runtime/options.h"

namespace wgx::cli {

namespace {

const char* kind_name(runtime::OptionKind kind) {
  switch (kind) {
    case runtime::OptionKind::OnOff: return "on/off";
    case runtime::OptionKind::Count: return "count";
    case runtime::OptionKind::Choice: return "choice";
  }
  return "";
}

// `text` in lines of at most `width` characters, broken at spaces, each after `indent`.
void print_wrapped(std::string_view text, size_t width, const char* indent) {
  while (!text.empty()) {
    size_t end = text.size();
    if (end > width) {
      end = text.rfind(' ', width);
      if (end == std::string_view::npos || end == 0) end = std::min(text.find(' '), text.size());
    }
    std::printf("%s%.*s\n", indent, static_cast<int>(end), text.data());
    text.remove_prefix(std::min(end + 1, text.size()));
  }
}

}  // namespace

int run_options(const GlobalOptions&, const std::vector<std::string>& args) {
  if (!args.empty()) throw std::invalid_argument("options: unexpected argument '" + args[0] + "' (usage: wgx options)");
  size_t name_width = 4, values_width = 6;
  for (const runtime::OptionSpec& s : runtime::option_specs()) {
    name_width = std::max(name_width, s.name.size());
    values_width = std::max(values_width, runtime::option_values(s).size());
  }
  std::printf("runtime options: wgx --option NAME=VALUE <command> (repeatable); docs/options.md says more of each\n\n");
  std::printf("%-*s  %-6s  %-7s  %-*s  %-7s  %s\n", static_cast<int>(name_width), "name", "kind", "default",
              static_cast<int>(values_width), "values", "results", "use");
  for (const runtime::OptionSpec& s : runtime::option_specs()) {
    std::printf("%-*s  %-6s  %-7.*s  %-*s  %-7s  %s\n", static_cast<int>(name_width), std::string(s.name).c_str(),
                kind_name(s.kind), static_cast<int>(s.default_value.size()), s.default_value.data(),
                static_cast<int>(values_width), runtime::option_values(s).c_str(), s.changes_results ? "change" : "same",
                s.diagnostic ? "diagnostic" : "setting");
    print_wrapped(s.doc, 92, "    ");
  }
  std::printf("\nresults: whether a value other than the default can change results beyond the stated tolerances\n"
              "auto: the adapter or the node's shapes decide; diagnostic: for tests and profiling, not a setting\n");
  return 0;
}

}  // namespace wgx::cli
