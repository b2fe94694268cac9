#include "runtime/options.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace wgx::runtime {

namespace {

constexpr std::array<std::string_view, 3> kAutoOnOff{"auto", "on", "off"};
constexpr std::array<std::string_view, 2> kQueryTiles{"16", "32"};
constexpr std::array<std::string_view, 4> kGemvStops{"off", "read", "stage", "products"};
constexpr std::array<std::string_view, 4> kSdpaStops{"off", "prologue", "scores", "softmax"};
// flash decoding's warm-ahead: off, the last matrix ahead, or one by its place (from 0: the
// candidates are at most 8, sdpa_flash.cpp).
constexpr std::array<std::string_view, 11> kWarm{"auto", "off", "last", "0", "1", "2", "3", "4", "5", "6", "7"};

constexpr OptionSpec on_off(std::string_view name, std::string_view default_value, std::string_view doc) {
  OptionSpec s;
  s.name = name;
  s.kind = OptionKind::OnOff;
  s.default_value = default_value;
  s.doc = doc;
  return s;
}
constexpr OptionSpec count(std::string_view name, std::string_view default_value, uint32_t min, uint32_t max,
                           std::string_view doc) {
  OptionSpec s;
  s.name = name;
  s.kind = OptionKind::Count;
  s.default_value = default_value;
  s.min = min;
  s.max = max;
  s.doc = doc;
  return s;
}
constexpr OptionSpec choice(std::string_view name, std::string_view default_value,
                            std::span<const std::string_view> choices, std::string_view doc) {
  OptionSpec s;
  s.name = name;
  s.kind = OptionKind::Choice;
  s.default_value = default_value;
  s.choices = choices;
  s.doc = doc;
  return s;
}
constexpr OptionSpec results(OptionSpec s) {
  s.changes_results = true;
  return s;
}
constexpr OptionSpec diagnostic(OptionSpec s) {
  s.diagnostic = true;
  return s;
}

// The table, by name. docs/options.md says more of each (what it does, what was measured); a
// test checks that it names exactly these.
constexpr std::array<OptionSpec, 14> kSpecs{
    results(on_off("quant_gemm_x8", "on",
                   "the prefill q4 GEMM rounds x to int8 in chunks of 32 (a step each) and multiplies four values "
                   "per instruction; off: f32 x")),
    diagnostic(count("quant_gemv_stage_wgs", "auto", 1, 65535,
                     "workgroups per row of a one-row q4 product that stages x, each taking every G-th column tile "
                     "(auto: 512 with int8 x, else 256); tests set few to walk several tiles at small sizes")),
    diagnostic(results(choice("quant_gemv_stop", "off", kGemvStops,
                              "the one-row q4 products end after the norm prologue's reads, after staging x, or "
                              "after their products (wrong results), so that bench --profile times the phases"))),
    results(choice("quant_gemv_x8", "auto", kAutoOnOff,
                   "one-row q4 products (decode) round x to int8, a scale per 32 values, and the MLP hands its "
                   "activation over in int8 (auto: products over rows of K <= 4096, and the MLP; on: every one; "
                   "off: none)")),
    choice("quant_mlp_persist", "auto", kAutoOnOff,
           "a one-token step's MLP in one dispatch, its down product after a handoff inside the dispatch (auto: "
           "on GPU adapters where the gate/up product has at most one column tile per workgroup)"),
    diagnostic(results(on_off("quant_mlp_persist_fault", "off",
                              "every wait of the one-dispatch MLP gives up at once, so the next read is an error "
                              "naming the route (a fault for tests)"))),
    diagnostic(on_off("quant_mlp_persist_help", "off",
                      "the one-dispatch MLP's first workgroup leaves its gate/up tiles to the waits, which must "
                      "make them (tests)")),
    count("quant_mlp_persist_wgs", "auto", 1, 65535,
          "workgroups of the one-dispatch MLP (auto: 256 on GPU adapters, 1 on CPU ones); more than run at once "
          "still finish, slower"),
    diagnostic(results(on_off("recorded_params", "on",
                               "off: the later steps of a submit of several decode steps get their params as queue "
                               "writes, which land before any step runs (wrong results: tests show they notice)"))),
    diagnostic(on_off("reduce_split_merge", "on",
                      "a reduction split into chunks has its last workgroup merge the partials; off: a second "
                      "dispatch, which by default serves only past 16,384 partials (tests)")),
    diagnostic(count("sdpa_decode_single_max", "auto", 0, 1u << 20,
                     "decode attention runs in one pass while input_pos + 1 is at most this many rows, else split "
                     "into chunks (auto: 128 at head_dim 64, 64 at 128 and where the projection merges the chunks; "
                     "0: never)")),
    diagnostic(results(choice("sdpa_decode_stop", "off", kSdpaStops,
                              "flash decoding's split pass ends after its prologue, its scores or their softmax "
                              "(wrong results), so that bench --profile times the phases"))),
    choice("sdpa_decode_warm", "auto", kWarm,
           "extra workgroups of flash decoding read a weight the next dispatches read into the L2 cache: off, the "
           "last (the MLP's down weight) or one by its place (auto: last on GPU adapters, off on CPU ones)"),
    choice("sdpa_query_tile", "16", kQueryTiles,
           "query rows per workgroup of the prefill attention (k16_streaming): 16, or 32 (half the workgroups)"),
};

bool decimal(std::string_view v) {
  return !v.empty() && v.size() <= 10 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `value` as the option takes it, or why not.
std::string check_value(const OptionSpec& s, std::string_view value) {
  bool ok = false;
  switch (s.kind) {
    case OptionKind::OnOff: ok = value == "on" || value == "off"; break;
    case OptionKind::Count:
      if (value == "auto") {
        ok = s.default_value == "auto";
      } else if (decimal(value)) {
        const uint64_t n = std::stoull(std::string(value));
        ok = n >= s.min && n <= s.max;
      }
      break;
    case OptionKind::Choice: ok = std::find(s.choices.begin(), s.choices.end(), value) != s.choices.end(); break;
  }
  if (ok) return "";
  return "runtime option " + std::string(s.name) + " is '" + std::string(value) + "'; it takes " + option_values(s);
}

const OptionSpec& spec_of(std::string_view name, OptionKind kind) {
  const OptionSpec* s = find_option(name);
  if (!s) throw std::logic_error("no runtime option '" + std::string(name) + "' in the table");
  if (s->kind != kind) throw std::logic_error("runtime option '" + std::string(name) + "' read as another kind");
  return *s;
}

// The option's value in `options`, else its default.
std::string_view value_of(const RuntimeOptions& options, const OptionSpec& s) {
  const auto it = options.find(s.name);
  return it == options.end() ? s.default_value : std::string_view(it->second);
}

}  // namespace

std::span<const OptionSpec> option_specs() { return kSpecs; }

const OptionSpec* find_option(std::string_view name) {
  const auto it = std::find_if(kSpecs.begin(), kSpecs.end(), [name](const OptionSpec& s) { return s.name == name; });
  return it == kSpecs.end() ? nullptr : &*it;
}

std::string option_values(const OptionSpec& s) {
  switch (s.kind) {
    case OptionKind::OnOff: return "on | off";
    case OptionKind::Count:
      return std::string(s.default_value == "auto" ? "auto | " : "") + std::to_string(s.min) + " to " +
             std::to_string(s.max);
    case OptionKind::Choice: {
      std::string out;
      for (std::string_view c : s.choices) out += (out.empty() ? "" : " | ") + std::string(c);
      return out;
    }
  }
  return "";
}

void validate_options(const RuntimeOptions& options) {
  for (const auto& [name, value] : options) {
    const OptionSpec* s = find_option(name);
    if (!s) {
      std::string names;
      for (const OptionSpec& each : kSpecs) names += (names.empty() ? "" : ", ") + std::string(each.name);
      throw std::invalid_argument("unknown runtime option '" + name + "'; the options are " + names);
    }
    if (std::string why = check_value(*s, value); !why.empty()) throw std::invalid_argument(why);
  }
}

bool option_on(const RuntimeOptions& options, std::string_view name) {
  return value_of(options, spec_of(name, OptionKind::OnOff)) == "on";
}

std::optional<uint32_t> option_count(const RuntimeOptions& options, std::string_view name) {
  const std::string_view v = value_of(options, spec_of(name, OptionKind::Count));
  if (v == "auto") return std::nullopt;
  return static_cast<uint32_t>(std::stoul(std::string(v)));
}

std::string_view option_choice(const RuntimeOptions& options, std::string_view name) {
  return value_of(options, spec_of(name, OptionKind::Choice));
}

}  // namespace wgx::runtime
