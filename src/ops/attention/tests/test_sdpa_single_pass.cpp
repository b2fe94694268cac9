// flash_decoding's single pass: a decode step whose visible rows (input_pos + 1) are at most
// sdpa_decode_single_max runs one dispatch (one chunk of every visible row, writing the output
// itself), a longer one the split pass and the combine. Every step is compared with the double
// reference on both sides of the threshold (f32 and f16 caches and activations, GQA), and the
// dispatches each step records are counted: the graph is two cache updates (one dispatch each)
// and sdpa, so sdpa's own count is the program's minus 2. A regression to always two passes (or
// to one pass past the threshold) fails the count; the option at 0 is the control that two
// passes are what the count sees otherwise.
#include <cmath>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "attention_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using testing::AttnConfig;
using testing::AttnReference;
using testing::Step;

constexpr double kU = 1.0 / 1024;  // f16's unit roundoff (either rounding direction)

struct SingleCase {
  std::string name;
  int64_t batch, hq, hkv, dim;
  DType io, kv;
};

// GQA throughout (groups of 4 and 3); f32, an f16 cache, f16 everything, f16 activations over an
// f32 cache.
const SingleCase kSingleCases[] = {
    {"F32_D64_Group4", 1, 8, 2, 64, DType::f32, DType::f32},
    {"F16Cache_D64_Group4", 1, 8, 2, 64, DType::f32, DType::f16},
    {"F16_D48_Group3_Batch2", 2, 6, 2, 48, DType::f16, DType::f16},
    {"F16Io_F32Cache_D128_Group4", 1, 4, 1, 128, DType::f16, DType::f32},
};

AttnConfig single_config(const SingleCase& sc, int64_t max_seq, RuntimeOptions options) {
  AttnConfig c;
  c.batch = sc.batch;
  c.hq = sc.hq;
  c.hkv = sc.hkv;
  c.dim = sc.dim;
  c.max_seq = max_seq;
  c.max_new = 1;  // decode only: flash_decoding's graphs
  c.io = sc.io;
  c.kv = sc.kv;
  c.options = std::move(options);
  return c;
}

// The history as the cache holds it: rounded to f16 once where the cache or the inputs are f16
// (make_steps gives f16 inputs exact in f16, so rounding them again changes nothing).
bool rounded_history(const AttnConfig& c) { return c.kv == DType::f16 || c.io == DType::f16; }

// f32 output: the f32 tolerance of a reference from the history the cache holds; f16 output: that
// plus its one rounding to f16.
::testing::AssertionResult matches(const AttnConfig& c, const std::vector<float>& got, const std::vector<float>& want) {
  if (c.io == DType::f32) return testing::close(got, want);
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::abs(double{got[i]} - want[i]) <= 1e-4 + kU * std::abs(want[i]))) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs one decode step at st.pos, checks it against `ref` (the step appended first) and returns
// sdpa's dispatches.
size_t run_and_check(Program& prog, const AttnConfig& c, AttnReference& ref, const Step& st) {
  const std::vector<float> got = testing::run_step(prog, c, st);
  ref.append(st);
  EXPECT_TRUE(matches(c, got, ref.attend(st)));
  return prog.dispatches_per_execute() - 2;  // the k and v cache updates
}

std::unique_ptr<Program> build(const AttnConfig& c) {
  graph::GraphBuilder b;
  auto prog = std::make_unique<Program>(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
  const RouteChoice& sdpa = testing::route_of(*prog, "sdpa");
  EXPECT_EQ(sdpa.route, "flash_decoding") << testing::rejected_text(sdpa);
  EXPECT_EQ(testing::route_of(*prog, "k_update").route, "update_cache");
  EXPECT_EQ(testing::route_of(*prog, "v_update").route, "update_cache");
  return prog;
}

// gtest prints a failing case by name.
void PrintTo(const SingleCase& c, std::ostream* os) { *os << c.name; }

class SinglePass : public ::testing::TestWithParam<SingleCase> {};

// These tests tell a single pass from a split one by the split's second dispatch, pass 2: the
// split pass's own merge (sdpa_decode_merge, one dispatch either way) is off in them.
const char* const kMerge = "sdpa_decode_merge";

// Threshold 40: positions 0 .. 39 (1 .. 40 visible rows) take one dispatch, 40 .. 100 two; every
// step matches the reference over the whole history (40 and 41 visible rows: the last single pass
// and the first split one; 101 rows: 3 chunks of 48 rows under the default chunking).
TEST_P(SinglePass, OneDispatchUpToTheThresholdTwoAfterAndEveryStepMatches) {
  const AttnConfig c = single_config(GetParam(), 104, {{"sdpa_decode_single_max", "40"}, {kMerge, "off"}});
  const std::unique_ptr<Program> prog = build(c);
  AttnReference ref(c, rounded_history(c));
  for (const Step& st : testing::make_steps(c, std::vector<int64_t>(101, 1), 4000)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos));
    EXPECT_EQ(run_and_check(*prog, c, ref, st), st.pos + 1 <= 40 ? 1u : 2u);
    if (::testing::Test::HasFailure()) return;
  }
}

// The control: at 0 every step runs both passes, so the count above does tell one pass from two.
TEST_P(SinglePass, ZeroNeverTakesTheSinglePass) {
  const AttnConfig c = single_config(GetParam(), 64, {{"sdpa_decode_single_max", "0"}, {kMerge, "off"}});
  const std::unique_ptr<Program> prog = build(c);
  AttnReference ref(c, rounded_history(c));
  for (const Step& st : testing::make_steps(c, std::vector<int64_t>(20, 1), 5000)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos));
    EXPECT_EQ(run_and_check(*prog, c, ref, st), 2u);
    if (::testing::Test::HasFailure()) return;
  }
}

// While one chunk covers the rows either way (at most 16 visible rows: the smallest chunk), the
// single pass writes what the combine makes of that chunk, bit for bit: its weight exp(m - m) is 1,
// and both call the same write_out2. So does the split pass's own merge of it.
TEST_P(SinglePass, EqualsTheCombineOfOneChunkBitForBit) {
  const AttnConfig one = single_config(GetParam(), 64, {{"sdpa_decode_single_max", "16"}});
  AttnConfig two = one, merging = one;
  two.options = {{"sdpa_decode_single_max", "0"}, {kMerge, "off"}};
  merging.options = {{"sdpa_decode_single_max", "0"}};
  const std::unique_ptr<Program> single = build(one), split = build(two), merged = build(merging);
  for (const Step& st : testing::make_steps(one, std::vector<int64_t>(16, 1), 6000)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos));
    const std::vector<float> got = testing::run_step(*single, one, st);
    EXPECT_EQ(single->dispatches_per_execute(), 3u);
    EXPECT_EQ(got, testing::run_step(*split, two, st));
    EXPECT_EQ(split->dispatches_per_execute(), 4u);
    EXPECT_EQ(got, testing::run_step(*merged, merging, st));
    EXPECT_EQ(merged->dispatches_per_execute(), 3u);
    if (::testing::Test::HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Storages, SinglePass, ::testing::ValuesIn(kSingleCases),
                         [](const auto& tp) { return tp.param.name; });

// The default threshold: 128 visible rows at head_dim 64 (two tiles), 64 at head_dim 128 (one).
// Positions on both sides of it run one pass and two; the steps jump ahead, and the rows between
// hold zeros on the device and in the reference alike.
TEST(SinglePassDefault, TwoTilesAtHeadDim64OneAt128) {
  struct Threshold {
    size_t single_case;
    int64_t rows;
  };
  for (const Threshold& t : {Threshold{1, 128}, Threshold{3, 64}}) {
    const AttnConfig c = single_config(kSingleCases[t.single_case], 320, {{kMerge, "off"}});
    SCOPED_TRACE("head_dim " + std::to_string(c.dim));
    const std::unique_ptr<Program> prog = build(c);
    AttnReference ref(c, rounded_history(c));
    const std::vector<Step> steps = testing::make_steps(c, std::vector<int64_t>(4, 1), 7000);
    const int64_t positions[] = {0, t.rows - 1, t.rows, 300};
    for (size_t i = 0; i < steps.size(); ++i) {
      Step st = steps[i];
      st.pos = positions[i];
      SCOPED_TRACE("input_pos " + std::to_string(st.pos));
      EXPECT_EQ(run_and_check(*prog, c, ref, st), st.pos < t.rows ? 1u : 2u);
    }
  }
}

// A malformed threshold declines the route with the reason (k16 takes the decode graph); 0 and
// the largest value are accepted.
TEST(SinglePassOption, MalformedValuesDeclineTheRoute) {
  for (const std::string& v : std::vector<std::string>{"", "-1", "4k", " 8", "1048577", "99999999999"}) {
    SCOPED_TRACE("sdpa_decode_single_max=\"" + v + "\"");
    const AttnConfig c = single_config(kSingleCases[0], 64, {{"sdpa_decode_single_max", v}});
    graph::GraphBuilder b;
    Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
    const RouteChoice& sdpa = testing::route_of(prog, "sdpa");
    EXPECT_EQ(sdpa.route, "k16_streaming_q16");
    EXPECT_NE(testing::rejected_text(sdpa).find("flash_decoding: sdpa_decode_single_max is \"" + v +
                                                "\", not a row count from 0 to 1048576"),
              std::string::npos)
        << testing::rejected_text(sdpa);
  }
  for (const std::string& v : std::vector<std::string>{"0", "1048576"}) {
    const AttnConfig c = single_config(kSingleCases[0], 64, {{"sdpa_decode_single_max", v}});
    graph::GraphBuilder b;
    Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
    EXPECT_EQ(testing::route_of(prog, "sdpa").route, "flash_decoding") << v;
  }
}

}  // namespace
}  // namespace wgx::runtime
