// flash_decoding's single pass: a decode step whose visible rows (input_pos + 1) are at most
// sdpa_decode_single_max runs one chunk of every visible row, which writes the output itself; a
// longer one splits the rows into chunks, merged by the dispatch's last workgroup per kv head.
// Every step is compared with the double reference on both sides of the threshold (f32 and f16
// caches and activations, GQA). Which path a step took shows bit for bit: the program with the
// threshold gives what a program always taking the single pass gives up to it, and what one
// always splitting gives past it; the control is that those two differ at some step (past one
// chunk of 16 rows, where the split merges several), so the comparison tells them apart. Every
// step records one dispatch for sdpa (and one per cache update).
#include <cmath>
#include <memory>
#include <ostream>
#include <stdexcept>
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

// Runs one decode step at st.pos and checks it against `ref` (the step appended first); its
// output, and one dispatch for sdpa besides the two cache updates.
std::vector<float> run_and_check(Program& prog, const AttnConfig& c, AttnReference& ref, const Step& st) {
  std::vector<float> got = testing::run_step(prog, c, st);
  ref.append(st);
  EXPECT_TRUE(matches(c, got, ref.attend(st)));
  EXPECT_EQ(prog.dispatches_per_execute(), 3u);
  return got;
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

const RuntimeOptions kAlwaysSingle{{"sdpa_decode_single_max", "1048576"}};
const RuntimeOptions kAlwaysSplit{{"sdpa_decode_single_max", "0"}};

// The program under test and the two it is compared with, fed the same steps: each step's output
// from the program, the always-single one and the always-split one.
struct Paths {
  AttnConfig c, single, split;
  std::unique_ptr<Program> prog, single_prog, split_prog;
  AttnReference ref, single_ref, split_ref;
  size_t differing = 0;  // steps where the single and the split outputs differ

  explicit Paths(const AttnConfig& config)
      : c(config),
        single(with(config, kAlwaysSingle)),
        split(with(config, kAlwaysSplit)),
        prog(build(c)),
        single_prog(build(single)),
        split_prog(build(split)),
        ref(c, rounded_history(c)),
        single_ref(c, rounded_history(c)),
        split_ref(c, rounded_history(c)) {}

  static AttnConfig with(AttnConfig c, const RuntimeOptions& options) {
    c.options = options;
    return c;
  }

  // Runs `st` on all three; expects the program's output to be the single pass's where `single`,
  // else the split's, bit for bit.
  void step(const Step& st, bool single_expected) {
    const std::vector<float> got = run_and_check(*prog, c, ref, st);
    const std::vector<float> one = run_and_check(*single_prog, single, single_ref, st);
    const std::vector<float> chunks = run_and_check(*split_prog, split, split_ref, st);
    if (one != chunks) ++differing;
    EXPECT_EQ(got, single_expected ? one : chunks) << (single_expected ? "not the single pass" : "not the split");
  }
};

// Threshold 40: 1 .. 40 visible rows take the single pass, 41 .. 101 the split (40 and 41: the
// last single pass and the first split one; 101 rows: 7 chunks of 16 under the default chunking).
TEST_P(SinglePass, SingleUpToTheThresholdSplitAfter) {
  Paths p(single_config(GetParam(), 104, {{"sdpa_decode_single_max", "40"}}));
  for (const Step& st : testing::make_steps(p.c, std::vector<int64_t>(101, 1), 4000)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos));
    p.step(st, st.pos + 1 <= 40);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(p.differing, 0u) << "the single pass and the split gave the same bits at every step";
}

// While one chunk covers the rows either way (at most 16 visible rows: the smallest chunk), the
// single pass writes what the split's merge makes of that chunk, bit for bit: its weight
// exp(m - m) is 1, and both call the same write_out2.
TEST_P(SinglePass, EqualsTheMergeOfOneChunkBitForBit) {
  const AttnConfig c = single_config(GetParam(), 64, kAlwaysSingle);
  AttnConfig split = c;
  split.options = kAlwaysSplit;
  const std::unique_ptr<Program> single_prog = build(c), split_prog = build(split);
  AttnReference ref(c, rounded_history(c)), split_ref(c, rounded_history(c));
  for (const Step& st : testing::make_steps(c, std::vector<int64_t>(16, 1), 6000)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos));
    EXPECT_EQ(run_and_check(*single_prog, c, ref, st), run_and_check(*split_prog, split, split_ref, st));
    if (::testing::Test::HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Storages, SinglePass, ::testing::ValuesIn(kSingleCases),
                         [](const auto& tp) { return tp.param.name; });

// The default threshold: 128 visible rows at head_dim 64 (two tiles), 64 at head_dim 128 (one).
// Positions on both sides of it take the single pass and the split; the steps jump ahead, and the
// rows between hold zeros on the device and in the reference alike.
TEST(SinglePassDefault, TwoTilesAtHeadDim64OneAt128) {
  struct Threshold {
    size_t single_case;
    int64_t rows;
  };
  for (const Threshold& t : {Threshold{1, 128}, Threshold{3, 64}}) {
    Paths p(single_config(kSingleCases[t.single_case], 320, {}));
    SCOPED_TRACE("head_dim " + std::to_string(p.c.dim));
    const std::vector<Step> steps = testing::make_steps(p.c, std::vector<int64_t>(4, 1), 7000);
    const int64_t positions[] = {0, t.rows - 1, t.rows, 300};
    for (size_t i = 0; i < steps.size(); ++i) {
      Step st = steps[i];
      st.pos = positions[i];
      SCOPED_TRACE("input_pos " + std::to_string(st.pos));
      p.step(st, st.pos < t.rows);
    }
    EXPECT_GT(p.differing, 0u) << "the single pass and the split gave the same bits at every step";
  }
}

// A malformed threshold is refused before anything is built, with the range it takes; 0 and the
// largest value are accepted.
TEST(SinglePassOption, MalformedValuesAreRefused) {
  for (const std::string& v : std::vector<std::string>{"", "-1", "4k", " 8", "1048577", "99999999999"}) {
    SCOPED_TRACE("sdpa_decode_single_max=\"" + v + "\"");
    const AttnConfig c = single_config(kSingleCases[0], 64, {{"sdpa_decode_single_max", v}});
    graph::GraphBuilder b;
    try {
      Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
      ADD_FAILURE() << "built";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("runtime option sdpa_decode_single_max is '" + v +
                                           "'; it takes auto | 0 to 1048576"),
                std::string::npos)
          << e.what();
    }
  }
  for (const std::string& v : std::vector<std::string>{"0", "1048576", "auto"}) {
    const AttnConfig c = single_config(kSingleCases[0], 64, {{"sdpa_decode_single_max", v}});
    graph::GraphBuilder b;
    Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
    EXPECT_EQ(testing::route_of(prog, "sdpa").route, "flash_decoding") << v;
  }
}

}  // namespace
}  // namespace wgx::runtime
