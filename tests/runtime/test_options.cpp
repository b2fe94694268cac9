// The runtime option registry (runtime/options.h): the table's own consistency, validation of a
// name/value map (an unknown name and a bad value of each kind, each message naming what is
// valid), the typed reads with their defaults, a Program refusing a map the table does not
// accept, and docs/options.md naming exactly the table's options.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "runtime/options.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

// The message validate_options throws for `options`, or "" where it accepts them.
std::string refusal(const RuntimeOptions& options) {
  try {
    validate_options(options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RuntimeOptions, TheTableIsSortedAndEachSpecIsConsistent) {
  const std::span<const OptionSpec> specs = option_specs();
  ASSERT_FALSE(specs.empty());
  for (size_t i = 0; i < specs.size(); ++i) {
    const OptionSpec& s = specs[i];
    SCOPED_TRACE(std::string(s.name));
    if (i > 0) {
      EXPECT_LT(specs[i - 1].name, s.name) << "the table is kept sorted by name, each name once";
    }
    EXPECT_EQ(find_option(s.name), &s);
    EXPECT_FALSE(s.doc.empty());
    EXPECT_EQ(s.doc.find('\n'), std::string_view::npos) << "a doc is one line";
    // The default is a value the option takes ("auto" among them where it is the default).
    EXPECT_EQ(refusal({{std::string(s.name), std::string(s.default_value)}}), "");
    switch (s.kind) {
      case OptionKind::OnOff: EXPECT_TRUE(s.default_value == "on" || s.default_value == "off"); break;
      case OptionKind::Count: EXPECT_LE(s.min, s.max); break;
      case OptionKind::Choice:
        EXPECT_FALSE(s.choices.empty());
        EXPECT_NE(std::find(s.choices.begin(), s.choices.end(), s.default_value), s.choices.end());
        break;
    }
  }
  EXPECT_EQ(find_option("no_such_option"), nullptr);
}

TEST(RuntimeOptions, AnEmptyMapAndEveryDefaultAreAccepted) {
  EXPECT_EQ(refusal({}), "");
  RuntimeOptions all;
  for (const OptionSpec& s : option_specs()) all[std::string(s.name)] = std::string(s.default_value);
  EXPECT_EQ(refusal(all), "");
}

TEST(RuntimeOptions, AnUnknownNameIsRefusedListingEveryOption) {
  const std::string why = refusal({{"quant_gemv_x8", "on"}, {"no_such_option", "1"}});
  EXPECT_TRUE(contains(why, "unknown runtime option 'no_such_option'")) << why;
  for (const OptionSpec& s : option_specs()) EXPECT_TRUE(contains(why, std::string(s.name))) << why;
  // A retired option is unknown too, and so is a name that differs in case.
  EXPECT_TRUE(contains(refusal({{"quant_gemv_tpc", "32"}}), "unknown runtime option 'quant_gemv_tpc'"));
  EXPECT_TRUE(contains(refusal({{"Quant_GEMV_x8", "on"}}), "unknown runtime option"));
}

TEST(RuntimeOptions, BadValuesOfEachKindAreRefusedNamingWhatTheOptionTakes) {
  struct Case {
    const char* name;
    const char* value;
    const char* message;
  };
  for (const Case& c : {
           // on | off
           Case{"quant_gemm_x8", "yes", "runtime option quant_gemm_x8 is 'yes'; it takes on | off"},
           Case{"recorded_params", "", "runtime option recorded_params is ''; it takes on | off"},
           Case{"quant_gemm_x8", "auto", "it takes on | off"},  // auto only where it is the default
           Case{"quant_gemm_x8", "ON", "it takes on | off"},
           // a count (with auto)
           Case{"quant_mlp_persist_wgs", "0", "runtime option quant_mlp_persist_wgs is '0'; it takes auto | 1 to 65535"},
           Case{"quant_mlp_persist_wgs", "65536", "it takes auto | 1 to 65535"},
           Case{"quant_mlp_persist_wgs", "-1", "it takes auto | 1 to 65535"},
           Case{"quant_mlp_persist_wgs", " 8", "it takes auto | 1 to 65535"},
           Case{"quant_mlp_persist_wgs", "4k", "it takes auto | 1 to 65535"},
           Case{"quant_gemv_stage_wgs", "99999999999", "it takes auto | 1 to 65535"},
           Case{"sdpa_decode_single_max", "1048577", "it takes auto | 0 to 1048576"},
           // a choice
           Case{"quant_gemv_x8", "banana", "runtime option quant_gemv_x8 is 'banana'; it takes auto | on | off"},
           Case{"sdpa_query_tile", "24", "runtime option sdpa_query_tile is '24'; it takes 16 | 32"},
           Case{"sdpa_decode_warm", "8", "it takes auto | off | last | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7"},
           Case{"sdpa_decode_stop", "tiles", "it takes off | prologue | scores | softmax"},
           Case{"quant_gemv_stop", "reduce", "it takes off | read | stage | products"},
       }) {
    SCOPED_TRACE(std::string(c.name) + "=" + c.value);
    const std::string why = refusal({{c.name, c.value}});
    EXPECT_TRUE(contains(why, c.message)) << why;
  }
  for (const auto& [name, value] : std::vector<std::pair<const char*, const char*>>{
           {"quant_mlp_persist_wgs", "1"},
           {"quant_mlp_persist_wgs", "65535"},
           {"quant_mlp_persist_wgs", "auto"},
           {"sdpa_decode_single_max", "0"},
           {"sdpa_decode_single_max", "1048576"},
           {"sdpa_decode_warm", "7"},
           {"quant_gemv_x8", "off"}}) {
    EXPECT_EQ(refusal({{name, value}}), "") << name << "=" << value;
  }
}

TEST(RuntimeOptions, TypedReadsGiveTheValueOrTheDefault) {
  const RuntimeOptions none;
  EXPECT_TRUE(option_on(none, "quant_gemm_x8"));
  EXPECT_TRUE(option_on(none, "recorded_params"));
  EXPECT_FALSE(option_on(none, "quant_mlp_persist_fault"));
  EXPECT_EQ(option_count(none, "quant_mlp_persist_wgs"), std::nullopt);  // auto
  EXPECT_EQ(option_choice(none, "quant_gemv_x8"), "auto");
  EXPECT_EQ(option_choice(none, "sdpa_query_tile"), "16");
  EXPECT_EQ(option_choice(none, "sdpa_decode_stop"), "off");

  const RuntimeOptions set{{"quant_gemm_x8", "off"},
                           {"quant_mlp_persist_wgs", "64"},
                           {"sdpa_decode_single_max", "0"},
                           {"quant_gemv_stage_wgs", "auto"},
                           {"sdpa_query_tile", "32"}};
  ASSERT_EQ(refusal(set), "");
  EXPECT_FALSE(option_on(set, "quant_gemm_x8"));
  EXPECT_EQ(option_count(set, "quant_mlp_persist_wgs"), 64u);
  EXPECT_EQ(option_count(set, "sdpa_decode_single_max"), 0u);
  EXPECT_EQ(option_count(set, "quant_gemv_stage_wgs"), std::nullopt);
  EXPECT_EQ(option_choice(set, "sdpa_query_tile"), "32");

  // A name the table lacks, or one read as another kind, is the caller's mistake.
  EXPECT_THROW(option_on(none, "no_such_option"), std::logic_error);
  EXPECT_THROW(option_count(none, "quant_gemm_x8"), std::logic_error);
  EXPECT_THROW(option_choice(none, "quant_mlp_persist_wgs"), std::logic_error);
}

TEST(RuntimeOptions, TheValuesLineSaysWhatEachKindTakes) {
  EXPECT_EQ(option_values(*find_option("quant_gemm_x8")), "on | off");
  EXPECT_EQ(option_values(*find_option("quant_mlp_persist_wgs")), "auto | 1 to 65535");
  EXPECT_EQ(option_values(*find_option("sdpa_query_tile")), "16 | 32");
}

// A Program checks its options before it builds anything: an unknown name or a bad value throws
// std::invalid_argument with the table's message.
TEST(RuntimeOptions, AProgramRefusesOptionsTheTableDoesNot) {
  graph::GraphBuilder b;
  auto x = b.input("x", graph::DType::f32, {4});
  b.output("y", b.op1("add", {x, x}));
  const graph::Graph g = b.build();
  try {
    Program prog(testing::shared_context(), g, b.weights(), {{"no_such_option", "1"}});
    ADD_FAILURE() << "an unknown option was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "unknown runtime option 'no_such_option'; the options are ")) << e.what();
  }
  try {
    Program prog(testing::shared_context(), g, b.weights(), {{"recorded_params", "maybe"}});
    ADD_FAILURE() << "a bad value was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "runtime option recorded_params is 'maybe'; it takes on | off")) << e.what();
  }
  EXPECT_NO_THROW(Program(testing::shared_context(), g, b.weights(), {{"recorded_params", "off"}}));
}

// docs/options.md describes each option under a heading "## `name`": exactly the table's.
TEST(RuntimeOptions, TheReferenceDocNamesExactlyTheTablesOptions) {
  std::ifstream doc(std::string(WGX_DOCS_DIR) + "/options.md");
  ASSERT_TRUE(doc) << "no " << WGX_DOCS_DIR << "/options.md";
  std::vector<std::string> documented;
  for (std::string line; std::getline(doc, line);) {
    if (line.starts_with("## `") && line.size() > 5 && line.back() == '`') {
      documented.push_back(line.substr(4, line.size() - 5));
    }
  }
  std::vector<std::string> table;
  for (const OptionSpec& spec : option_specs()) table.emplace_back(spec.name);
  std::vector<std::string> sorted = documented;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, table) << "docs/options.md and runtime/options.cpp name different options";
  EXPECT_EQ(std::set<std::string>(documented.begin(), documented.end()).size(), documented.size())
      << "an option documented twice";
}

}  // namespace
}  // namespace wgx::runtime
