// The runtime options: one table of every option a Program reads (its name, kind, default,
// values, whether it can change results, a line of doc), the check of a name/value map against
// it, and the typed reads the runtime and the ops make. Nothing here needs a GPU: a command line
// or an API can list the table and check its options before it creates a device.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace wgx::runtime {

// Runtime options by name, e.g. "sdpa_query_tile" = "32": what Program takes, checked against
// the table when it is built (validate_options).
using RuntimeOptions = std::map<std::string, std::string, std::less<>>;

enum class OptionKind {
  OnOff,   // "on" or "off"
  Count,   // a decimal count from `min` to `max` ("auto" too where that is the default)
  Choice,  // one of `choices`
};

struct OptionSpec {
  std::string_view name;
  OptionKind kind = OptionKind::OnOff;
  // A value of the option, or "auto": the adapter or the node's shapes decide (the doc says how).
  std::string_view default_value;
  uint32_t min = 0, max = 0;                  // Count
  std::span<const std::string_view> choices;  // Choice, in the order the doc gives them
  // Whether a value other than the default can change results beyond the stated tolerances (the
  // int8 roundings of activations, the diagnostics that end kernels early or fail on purpose).
  bool changes_results = false;
  // For tests and profiling (reaching a path at small sizes, timing a kernel's phases, injecting
  // a fault), not a setting to run models with.
  bool diagnostic = false;
  std::string_view doc;  // one line
};

// Every option, by name.
std::span<const OptionSpec> option_specs();
// The option called `name`, or nullptr.
const OptionSpec* find_option(std::string_view name);
// The values an option takes, as a line: "on | off", "auto | 1 to 65535", "16 | 32".
std::string option_values(const OptionSpec& spec);
// Throws std::invalid_argument for a name not in the table (the message lists every option's
// name) or a value the option does not take (the message says which it takes).
void validate_options(const RuntimeOptions& options);

// Reads of an option in a map that validate_options accepted, its default where the map does
// not name it. Each throws std::logic_error for a name not in the table or of another kind (a
// mistake in the caller, not in the map).
bool option_on(const RuntimeOptions& options, std::string_view name);
// nullopt for "auto".
std::optional<uint32_t> option_count(const RuntimeOptions& options, std::string_view name);
std::string_view option_choice(const RuntimeOptions& options, std::string_view name);

}  // namespace wgx::runtime
