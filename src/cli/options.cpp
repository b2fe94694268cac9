// wgx options: the runtime options' table (wgx::options()): each option's name, kind,
// default, values, whether it can change results, what it is for, and a line of doc. Needs no
// device.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cli/commands.h"

namespace wgx::cli {

namespace {

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
  const std::vector<OptionInfo> table = wgx::options();
  for (const OptionInfo& o : table) {
    name_width = std::max(name_width, o.name.size());
    values_width = std::max(values_width, o.values.size());
  }
  std::printf("runtime options: wgx --option NAME=VALUE <command> (repeatable); docs/options.md says more of each\n\n");
  std::printf("%-*s  %-6s  %-7s  %-*s  %-7s  %s\n", static_cast<int>(name_width), "name", "kind", "default",
              static_cast<int>(values_width), "values", "results", "use");
  for (const OptionInfo& o : table) {
    std::printf("%-*s  %-6s  %-7s  %-*s  %-7s  %s\n", static_cast<int>(name_width), o.name.c_str(), o.type.c_str(),
                o.default_value.c_str(), static_cast<int>(values_width), o.values.c_str(),
                o.changes_results ? "change" : "same", o.diagnostic ? "diagnostic" : "setting");
    print_wrapped(o.doc, 92, "    ");
  }
  std::printf("\nresults: whether a value other than the default can change results beyond the stated tolerances\n"
              "auto: the adapter or the node's shapes decide; diagnostic: for tests and profiling, not a setting\n");
  return 0;
}

}  // namespace wgx::cli
