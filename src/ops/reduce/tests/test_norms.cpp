// rms_norm and layer_norm over the last dim against double references: with and without weight
// and bias, rows of 113 and 1031, a large mean (the variance must not cancel), f16 rows of odd
// length, eps, and a symbolic row count; negative controls for layer_norm's mean, bias and eps.
#include <array>
#include <map>

#include "graph/builder.h"
#include "reduce_test_util.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close;
using testing::norm_ref;
using testing::random_floats;
using testing::route_of;
using testing::shared_context;
using testing::to_float;

// Rows of 113 and of 1031 (several passes per invocation), each with every weight/bias
// combination, in one program.
TEST(Norms, MatchDoubleReferenceInF32) {
  GraphBuilder b;
  for (int64_t n : {113, 1031}) {
    const std::string s = std::to_string(n);
    auto x = b.input("x" + s, DType::f32, {2, 3, n});
    auto w = b.input("w" + s, DType::f32, {n});
    auto bias = b.input("b" + s, DType::f32, {n});
    b.output("rms" + s, b.op1("rms_norm", {x, w}));
    b.output("rms_plain" + s, b.op1("rms_norm", {x}, {{"eps", 0.5}}));
    b.output("ln" + s, b.op1("layer_norm", {x, w, bias}));
    b.output("ln_weight" + s, b.op1("layer_norm", {x, w}));
    b.output("ln_plain" + s, b.op1("layer_norm", {x}, {{"eps", 0.25}}));
  }
  Program prog(shared_context(), b.build(), b.weights());
  std::map<int64_t, std::array<std::vector<float>, 3>> data;  // x, weight, bias by row length
  uint32_t seed = 50;
  for (int64_t n : {113, 1031}) {
    const std::string s = std::to_string(n);
    const size_t un = static_cast<size_t>(n);
    // A mean of 100 and a spread of 1: E[x^2] - E[x]^2 in f32 would lose most digits.
    auto& [vx, vw, vb] = data[n];
    vx = random_floats(6 * un, seed++, 99.f, 101.f);
    vw = random_floats(un, seed++);
    vb = random_floats(un, seed++);
    prog.set_input<float>("x" + s, vx, {2, 3, n});
    prog.set_input<float>("w" + s, vw, {n});
    prog.set_input<float>("b" + s, vb, {n});
  }
  prog.execute();
  for (const auto& [n, d] : data) {
    const auto& [vx, vw, vb] = d;
    const std::string s = std::to_string(n);
    const size_t un = static_cast<size_t>(n);
    EXPECT_TRUE(close(prog.read_f32("rms" + s), to_float(norm_ref(vx, un, false, 1e-6, vw, {})))) << n;
    EXPECT_TRUE(close(prog.read_f32("rms_plain" + s), to_float(norm_ref(vx, un, false, 0.5, {}, {})))) << n;
    EXPECT_TRUE(close(prog.read_f32("ln" + s), to_float(norm_ref(vx, un, true, 1e-5, vw, vb)))) << n;
    EXPECT_TRUE(close(prog.read_f32("ln_weight" + s), to_float(norm_ref(vx, un, true, 1e-5, vw, {})))) << n;
    EXPECT_TRUE(close(prog.read_f32("ln_plain" + s), to_float(norm_ref(vx, un, true, 0.25, {}, {})))) << n;
    // Negative controls: the same comparison tells apart a layer_norm that kept the mean
    // (rms_norm's form), dropped the bias, or took another eps.
    EXPECT_FALSE(close(prog.read_f32("ln" + s), to_float(norm_ref(vx, un, false, 1e-5, vw, vb)))) << n;
    EXPECT_FALSE(close(prog.read_f32("ln" + s), to_float(norm_ref(vx, un, true, 1e-5, vw, {})))) << n;
    EXPECT_FALSE(close(prog.read_f32("ln_plain" + s), to_float(norm_ref(vx, un, true, 1e-5, {}, {})))) << n;
  }
  for (const auto& r : prog.routes()) EXPECT_EQ(r.route, "row") << r.op;
}

// f16 x, weight and bias; rows of odd length (pairs per workgroup). Computed in f32 and rounded
// once: within one f16 ulp (rel 2^-10) of the rounded reference, or 1e-3 near zero.
TEST(NormsF16, OddRows) {
  const size_t n = 113, count = 5 * 37 * n;
  GraphBuilder b;
  auto x = b.input("x", DType::f16, {5, 37, 113});
  auto w = b.input("w", DType::f16, {113});
  auto bias = b.input("b", DType::f16, {113});
  b.output("rms", b.op1("rms_norm", {x, w}));
  b.output("ln", b.op1("layer_norm", {x, w, bias}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto hx = testing::to_f16(random_floats(count, 53)), hw = testing::to_f16(random_floats(n, 54)),
             hb = testing::to_f16(random_floats(n, 55));
  const auto vx = testing::from_f16(hx), vw = testing::from_f16(hw), vb = testing::from_f16(hb);
  prog.set_input<uint16_t>("x", hx, {5, 37, 113});
  prog.set_input<uint16_t>("w", hw, {113});
  prog.set_input<uint16_t>("b", hb, {113});
  prog.execute();
  EXPECT_TRUE(close(prog.read_f32("rms"), testing::round_f16(to_float(norm_ref(vx, n, false, 1e-6, vw, {}))), 1e-3,
                    1.0 / 1024));
  EXPECT_TRUE(close(prog.read_f32("ln"), testing::round_f16(to_float(norm_ref(vx, n, true, 1e-5, vw, vb))), 1e-3,
                    1.0 / 1024));
  EXPECT_EQ(route_of(prog, 0), "row");
  EXPECT_EQ(route_of(prog, 1), "row");
}

TEST(NormsSymbolic, RowCountChanges) {
  GraphBuilder b;
  auto rows = b.sym("rows", 1, 64);
  auto x = b.input("x", DType::f32, {1, rows, 113});
  auto w = b.input("w", DType::f32, {113});
  b.output("rms", b.op1("rms_norm", {x, w}));
  b.output("ln", b.op1("layer_norm", {x, w}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto vw = random_floats(113, 60);
  prog.set_input<float>("w", vw, {113});
  uint32_t seed = 61;
  for (int64_t r : {7, 64, 1, 23}) {
    const auto vx = random_floats(static_cast<size_t>(r) * 113, seed++);
    prog.set_input<float>("x", vx, {1, r, 113});
    prog.execute();
    EXPECT_TRUE(close(prog.read_f32("rms"), to_float(norm_ref(vx, 113, false, 1e-6, vw, {})))) << r;
    EXPECT_TRUE(close(prog.read_f32("ln"), to_float(norm_ref(vx, 113, true, 1e-5, vw, {})))) << r;
  }
}

}  // namespace
}  // namespace wgx::runtime
