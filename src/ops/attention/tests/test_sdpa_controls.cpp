// Negative controls: they prove the replay tests can fail and that what they test is real.
// (a) input_pos pinned to the constant 0: every step overwrites rows 0.. and attends only them,
//     so after the first step the outputs must leave the reference's tolerance.
// (b) a fresh program per step: the caches hold only the step's own tokens (zeros elsewhere), so
//     after the first step the outputs must diverge: the in-graph cache really accumulates.
// Both first check that step 0 (input_pos 0, nothing to remember) does match.
// And sdpa_decode_stop (diagnostics) really ends flash decoding's split pass early: with it every
// step's output leaves the tolerance, without it (the same steps) every step matches.
#include <algorithm>
#include <cmath>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention_test_util.h"

namespace wgx::runtime {
namespace {

using testing::AttnConfig;
using testing::AttnReference;

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double{a[i]} - b[i]));
  return m;
}

struct ControlCase {
  std::string name;
  int64_t dim, max_new;
  std::vector<int64_t> steps;
  std::string route;
};

AttnConfig control_config(const ControlCase& cc) {
  AttnConfig c;
  c.hq = 4;
  c.hkv = 1;
  c.dim = cc.dim;
  c.max_new = cc.max_new;
  return c;
}

const ControlCase kControlCases[] = {
    {"K16", 64, 16, {13, 3, 1, 1}, "k16_streaming_q16"},
    {"Materialized", 80, 16, {7, 3, 1, 1}, "materialized"},
    {"Flash", 64, 1, {1, 1, 1, 1, 1, 1}, "flash_decoding"},
};

// gtest prints a failing case by name.
void PrintTo(const ControlCase& c, std::ostream* os) { *os << c.name; }

class Control : public ::testing::TestWithParam<ControlCase> {};

TEST_P(Control, PinnedInputPosDiverges) {
  const AttnConfig c = control_config(GetParam());
  graph::GraphBuilder b;
  Program prog(testing::shared_context(), testing::attention_graph(b, c, true), b.weights());
  ASSERT_EQ(testing::route_of(prog, "sdpa").route, GetParam().route);
  AttnReference ref(c, false);
  const auto steps = testing::make_steps(c, GetParam().steps, 500);
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::vector<float> got = testing::run_step(prog, c, steps[i], false);
    ref.append(steps[i]);
    const std::vector<float> want = ref.attend(steps[i]);
    if (i == 0) {
      EXPECT_TRUE(testing::close(got, want)) << "step 0 has input_pos 0 either way";
    } else {
      EXPECT_FALSE(testing::close(got, want)) << "step " << i;
      EXPECT_GT(max_abs_diff(got, want), 0.05) << "step " << i;
    }
  }
}

TEST_P(Control, FreshProgramPerStepDiverges) {
  const AttnConfig c = control_config(GetParam());
  AttnReference ref(c, false);
  const auto steps = testing::make_steps(c, GetParam().steps, 600);
  for (size_t i = 0; i < steps.size(); ++i) {
    graph::GraphBuilder b;
    Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights());
    const std::vector<float> got = testing::run_step(prog, c, steps[i]);
    ref.append(steps[i]);
    const std::vector<float> want = ref.attend(steps[i]);
    if (i == 0) {
      EXPECT_TRUE(testing::close(got, want)) << "step 0 needs no history";
    } else {
      EXPECT_FALSE(testing::close(got, want)) << "step " << i;
      EXPECT_GT(max_abs_diff(got, want), 0.05) << "step " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Routes, Control, ::testing::ValuesIn(kControlCases),
                         [](const auto& tp) { return tp.param.name; });

TEST(FlashStop, EveryStopLeavesTheOutputUncomputed) {
  for (const char* stop : {"", "prologue", "scores", "softmax"}) {
    SCOPED_TRACE(std::string("sdpa_decode_stop ") + stop);
    AttnConfig c = control_config({"Flash", 64, 1, {}, "flash_decoding"});
    c.options = {{"sdpa_decode_single_max", "0"}};  // the split pass at every step
    if (*stop) c.options["sdpa_decode_stop"] = stop;
    graph::GraphBuilder b;
    Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
    ASSERT_EQ(testing::route_of(prog, "sdpa").route, "flash_decoding");
    AttnReference ref(c, false);
    for (const testing::Step& st : testing::make_steps(c, {1, 1, 1, 1}, 700)) {
      const std::vector<float> got = testing::run_step(prog, c, st);
      ref.append(st);
      EXPECT_EQ(testing::close(got, ref.attend(st)), *stop == '\0') << "step at input_pos " << st.pos;
    }
  }
  AttnConfig c = control_config({"Flash", 64, 1, {}, "flash_decoding"});
  c.options = {{"sdpa_decode_stop", "tiles"}};
  graph::GraphBuilder b;
  try {
    Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
    ADD_FAILURE() << "built";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("runtime option sdpa_decode_stop is 'tiles'; it takes off | prologue"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace wgx::runtime
