// Unary float math and activations against double-precision CPU references at prime sizes, in f32
// and packed f16 (computed in f32), and the inputs where WGSL leaves its builtins undefined.
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "graph/builder.h"
#include "runtime/program.h"
#include "runtime_test_util.h"
#include "unary_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close;
using testing::from_f16;
using testing::random_floats;
using testing::round_f16;
using testing::close_special;
using testing::shared_context;
using testing::to_f16;

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double gelu_ref(double x) { return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2)); }
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}

struct MathOp {
  const char* name;
  const char* op;
  graph::Attrs attrs;
  std::function<double(double)> ref;
  float lo, hi;  // input range
};

class UnaryMath : public ::testing::TestWithParam<MathOp> {};

TEST_P(UnaryMath, MatchesDoubleReferenceInF32AndF16) {
  const MathOp& p = GetParam();
  GraphBuilder b;
  b.output("y32", b.op1(p.op, {b.input("x32", DType::f32, {3, 37})}, p.attrs));
  b.output("y16", b.op1(p.op, {b.input("x16", DType::f16, {113})}, p.attrs));
  Program prog(shared_context(), b.build(), b.weights());
  const auto v32 = random_floats(111, 11, p.lo, p.hi);
  const auto h16 = to_f16(random_floats(113, 12, p.lo, p.hi));
  prog.set_input<float>("x32", v32, {3, 37});
  prog.set_input<uint16_t>("x16", h16, {113});
  prog.execute();
  std::vector<float> want32, want16;
  for (float x : v32) want32.push_back(static_cast<float>(p.ref(x)));
  for (float x : from_f16(h16)) want16.push_back(round_f16(p.ref(x)));
  EXPECT_TRUE(close(prog.read_f32("y32"), want32));
  // f16: the f32 result rounded once, so within one f16 ulp (rel 2^-10) of the rounded reference.
  EXPECT_TRUE(close(prog.read_f32("y16"), want16, 1e-6, 1.0 / 1024));
  for (const RouteChoice& r : prog.routes()) EXPECT_EQ(r.route, "unary") << r.label;
}

INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryMath,
    ::testing::Values(
        MathOp{"exp", "exp", {}, [](double x) { return std::exp(x); }, -4, 4},
        MathOp{"log", "log", {}, [](double x) { return std::log(x); }, 0.05f, 8},
        MathOp{"sqrt", "sqrt", {}, [](double x) { return std::sqrt(x); }, 0, 8},
        MathOp{"rsqrt", "rsqrt", {}, [](double x) { return 1 / std::sqrt(x); }, 0.05f, 8},
        MathOp{"neg", "neg", {}, [](double x) { return -x; }, -2, 2},
        MathOp{"abs", "abs", {}, [](double x) { return std::abs(x); }, -2, 2},
        MathOp{"sigmoid", "sigmoid", {}, sigmoid_ref, -8, 8},
        MathOp{"silu", "silu", {}, [](double x) { return x * sigmoid_ref(x); }, -8, 8},
        MathOp{"gelu", "gelu", {}, gelu_ref, -6, 6},
        MathOp{"gelu_tanh", "gelu", {{"approximate", "tanh"}}, gelu_tanh_ref, -6, 6},
        MathOp{"tanh", "tanh", {}, [](double x) { return std::tanh(x); }, -6, 6},
        MathOp{"sin", "sin", {}, [](double x) { return std::sin(x); }, -10, 10},
        MathOp{"cos", "cos", {}, [](double x) { return std::cos(x); }, -10, 10},
        MathOp{"reciprocal", "reciprocal", {}, [](double x) { return 1 / x; }, -4, 4},
        MathOp{"clamp", "clamp", {{"min", -0.5}, {"max", 0.75}}, [](double x) { return std::clamp(x, -0.5, 0.75); }, -2,
               2},
        MathOp{"clamp_min", "clamp", {{"min", 0.0}}, [](double x) { return std::max(x, 0.0); }, -2, 2},
        MathOp{"clamp_max", "clamp", {{"max", 0.25}}, [](double x) { return std::min(x, 0.25); }, -2, 2}),
    [](const auto& tp) { return std::string(tp.param.name); });

// erf recovered from exact gelu (2y/x - 1) over [-8, 8]: erf_f is within 1.1e-7 evaluated in f32
// and gelu's own roundings add up to ~2.4e-7 (1.8e-7 measured on SwiftShader). The tanh form, a
// negative control, is 4.7e-4 off.
TEST(UnaryMath, ExactGeluHasErfAccurateToAbout1e7) {
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {227});
  b.output("exact", b.op1("gelu", {x}));
  b.output("approx", b.op1("gelu", {x}, {{"approximate", "tanh"}}));
  Program prog(shared_context(), b.build(), b.weights());
  auto v = random_floats(227, 21, -8, 8);
  prog.set_input<float>("x", v, {227});
  prog.execute();
  const auto exact = prog.read_f32("exact"), approx = prog.read_f32("approx");
  double worst = 0, approx_gap = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::abs(v[i]) < 0.25f) continue;  // 2y/x amplifies y's rounding near 0
    worst = std::max(worst, std::abs(2.0 * exact[i] / v[i] - 1 - std::erf(v[i] / std::numbers::sqrt2)));
    approx_gap = std::max(approx_gap, std::abs(static_cast<double>(approx[i]) - gelu_ref(v[i])));
  }
  EXPECT_LT(worst, 3.5e-7);
  EXPECT_GT(approx_gap, 1e-5);
}

// Rotary embeddings take sin/cos of large angles; the range reduction keeps them accurate.
TEST(UnaryMath, SinCosStayAccurateForLargeArguments) {
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {113});
  b.output("sin", b.op1("sin", {x}));
  b.output("cos", b.op1("cos", {x}));
  Program prog(shared_context(), b.build(), b.weights());
  auto v = random_floats(113, 22, -8000, 8000);
  prog.set_input<float>("x", v, {113});
  prog.execute();
  std::vector<float> want_sin, want_cos;
  for (float t : v) {
    want_sin.push_back(static_cast<float>(std::sin(static_cast<double>(t))));
    want_cos.push_back(static_cast<float>(std::cos(static_cast<double>(t))));
  }
  EXPECT_TRUE(close(prog.read_f32("sin"), want_sin, 1e-6, 0));
  EXPECT_TRUE(close(prog.read_f32("cos"), want_cos, 1e-6, 0));
}

// Where WGSL leaves results undefined (log, sqrt, rsqrt and 1/x off their domains, tanh and exp of
// large arguments, f16 overflow, NaN through min/max), the kernels give PyTorch's IEEE results.
TEST(UnaryMath, SpecialValuesFollowIeee) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> in{0.f, -0.f, -1.f, 1.f, 100.f, -100.f, nan};
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {7});
  auto h = b.input("h", DType::f16, {7});
  for (const char* op : {"exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sin", "cos", "sigmoid", "gelu"}) b.output(op, b.op1(op, {x}));
  b.output("clamp", b.op1("clamp", {x}, {{"min", -2.0}, {"max", 2.0}}));
  b.output("exp16", b.op1("exp", {h}));
  Program prog(shared_context(), b.build(), b.weights());
  prog.set_input<float>("x", in, {7});
  prog.set_input<uint16_t>("h", testing::to_f16({0.f, -0.f, -1.f, 1.f, 12.f, -100.f, nan}), {7});
  prog.execute();
  EXPECT_TRUE(close_special(prog.read_f32("exp"), {1.f, 1.f, std::exp(-1.f), std::exp(1.f), inf, 0.f, nan}));
  EXPECT_TRUE(close_special(prog.read_f32("log"), {-inf, -inf, nan, 0.f, std::log(100.f), nan, nan}));
  EXPECT_TRUE(close_special(prog.read_f32("sqrt"), {0.f, 0.f, nan, 1.f, 10.f, nan, nan}));
  EXPECT_TRUE(close_special(prog.read_f32("rsqrt"), {inf, -inf, nan, 1.f, 0.1f, nan, nan}));
  EXPECT_TRUE(close_special(prog.read_f32("reciprocal"), {inf, -inf, -1.f, 1.f, 0.01f, -0.01f, nan}));
  EXPECT_TRUE(close_special(prog.read_f32("tanh"), {0.f, 0.f, std::tanh(-1.f), std::tanh(1.f), 1.f, -1.f, nan}));
  EXPECT_TRUE(close_special(prog.read_f32("sin"), {0.f, 0.f, std::sin(-1.f), std::sin(1.f), std::sin(100.f),
                                                  std::sin(-100.f), nan}));
  EXPECT_TRUE(close_special(prog.read_f32("cos"), {1.f, 1.f, std::cos(-1.f), std::cos(1.f), std::cos(100.f),
                                                  std::cos(-100.f), nan}));
  EXPECT_TRUE(close_special(prog.read_f32("clamp"), {0.f, 0.f, -1.f, 1.f, 2.f, -2.f, nan}));
  const auto sig = prog.read_f32("sigmoid");
  EXPECT_EQ(sig[4], 1.f);
  EXPECT_LT(sig[5], 1e-30f);
  EXPECT_TRUE(std::isnan(sig[6]));
  const auto gelu = prog.read_f32("gelu");
  EXPECT_EQ(gelu[4], 100.f);
  EXPECT_EQ(gelu[5], 0.f);
  EXPECT_TRUE(std::isnan(gelu[6]));
  // exp(12) = 162755 overflows f16 to inf.
  EXPECT_TRUE(close_special(prog.read_f32("exp16"), {1.f, 1.f, round_f16(std::exp(-1.0)), round_f16(std::exp(1.0)),
                                                   inf, 0.f, nan}));
}

}  // namespace
}  // namespace wgx::runtime
