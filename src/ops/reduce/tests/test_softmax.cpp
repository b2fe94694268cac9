// softmax and log_softmax against double references: the row route (last dim, fused) and the
// strided route (columns, two dispatches), f32 and packed f16 with odd rows, large and masked
// inputs (max-subtraction), symbolic row counts and lengths.
#include <limits>

#include "graph/builder.h"
#include "reduce_test_util.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close;
using testing::random_floats;
using testing::route_of;
using testing::shared_context;
using testing::softmax_ref;
using testing::to_float;

size_t numel_of(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

struct Case {
  const char* name;
  std::vector<int64_t> shape;
  int64_t dim;
  const char* route;
};

// Every case in one program (each variant compiles once). Inputs in [-100, 100]: exp overflows
// f32 beyond 88, so only a max-subtracting kernel passes.
TEST(Softmax, MatchesDoubleReferenceInF32) {
  const std::vector<Case> cases{
      {"last_dim", {3, 37, 113}, -1, "row"},       {"long_rows", {5, 1031}, 1, "row"},
      {"trailing_ones", {11, 37, 1, 1}, 1, "row"}, {"middle_dim", {3, 37, 113}, 1, "strided"},
      {"first_dim", {37, 3, 11}, -3, "strided"},
  };
  GraphBuilder b;
  for (const Case& c : cases) {
    auto x = b.input(c.name, DType::f32, graph::Shape(c.shape.begin(), c.shape.end()));
    b.output(std::string("softmax.") + c.name, b.op1("softmax", {x}, {{"dim", c.dim}}));
    b.output(std::string("log_softmax.") + c.name, b.op1("log_softmax", {x}, {{"dim", c.dim}}));
  }
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<std::vector<float>> inputs;
  for (const Case& c : cases) {
    inputs.push_back(random_floats(numel_of(c.shape), static_cast<uint32_t>(inputs.size()) + 31, -100.f, 100.f));
    prog.set_input<float>(c.name, inputs.back(), c.shape);
  }
  prog.execute();
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    for (bool log : {false, true}) {
      const std::string out = std::string(log ? "log_softmax." : "softmax.") + c.name;
      EXPECT_TRUE(close(prog.read_f32(out), to_float(softmax_ref(inputs[i], c.shape, c.dim, log)))) << out;
      EXPECT_EQ(route_of(prog, 2 * i + (log ? 1 : 0)), c.route) << out;
    }
  }
}

// Packed f16 rows of odd length (workgroups take rows in pairs) and odd columns. Computed in f32
// and rounded once: within one f16 ulp (rel 2^-10) of the rounded reference, or 1e-4 near zero.
TEST(SoftmaxF16, OddRowsAndColumns) {
  const std::vector<int64_t> shape{3, 37, 113};
  GraphBuilder b;
  auto x = b.input("x", DType::f16, {3, 37, 113});
  b.output("row", b.op1("softmax", {x}, {{"dim", -1}}));
  b.output("log_row", b.op1("log_softmax", {x}, {{"dim", 2}}));
  b.output("col", b.op1("softmax", {x}, {{"dim", 1}}));
  b.output("log_col", b.op1("log_softmax", {x}, {{"dim", 0}}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto h = testing::to_f16(random_floats(numel_of(shape), 32, -8.f, 8.f));
  const auto vx = testing::from_f16(h);
  prog.set_input<uint16_t>("x", h, shape);
  prog.execute();
  auto want = [&](int64_t dim, bool log) { return testing::round_f16(to_float(softmax_ref(vx, shape, dim, log))); };
  EXPECT_TRUE(close(prog.read_f32("row"), want(-1, false), 1e-4, 1.0 / 1024));
  EXPECT_TRUE(close(prog.read_f32("log_row"), want(2, true), 1e-4, 1.0 / 1024));
  EXPECT_TRUE(close(prog.read_f32("col"), want(1, false), 1e-4, 1.0 / 1024));
  EXPECT_TRUE(close(prog.read_f32("log_col"), want(0, true), 1e-4, 1.0 / 1024));
  EXPECT_EQ(route_of(prog, 0), "row");
  EXPECT_EQ(route_of(prog, 1), "row");
  EXPECT_EQ(route_of(prog, 2), "strided");
  EXPECT_EQ(route_of(prog, 3), "strided");
  const auto bytes = prog.read_storage("row");  // 12543 halves: the last word's high half is tail
  ASSERT_EQ(bytes.size(), 25088u);
  EXPECT_EQ(bytes[25086], 0);
  EXPECT_EQ(bytes[25087], 0);
}

// Attention-style masks: -inf entries get exactly 0 (and -inf in log space), the rest renormalize.
TEST(SoftmaxMasked, MinusInfinityEntries) {
  const std::vector<int64_t> shape{13, 37};
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {13, 37});
  b.output("row", b.op1("softmax", {x}, {{"dim", 1}}));
  b.output("col", b.op1("softmax", {x}, {{"dim", 0}}));
  Program prog(shared_context(), b.build(), b.weights());
  auto vx = random_floats(numel_of(shape), 33);
  for (size_t r = 0; r < 13; ++r) {
    for (size_t c = r + 1; c < 37; ++c) vx[r * 37 + c] = -std::numeric_limits<float>::infinity();
  }
  prog.set_input<float>("x", vx, shape);
  prog.execute();
  EXPECT_TRUE(close(prog.read_f32("row"), to_float(softmax_ref(vx, shape, 1, false))));
  // Columns past 12 are all -inf: NaN there, as in PyTorch; the others are checked.
  const auto col = prog.read_f32("col");
  const auto want = to_float(softmax_ref(vx, shape, 0, false));
  for (size_t i = 0; i < col.size(); ++i) {
    if (i % 37 < 13) {
      EXPECT_NEAR(col[i], want[i], 1e-6) << i;
    }
  }
}

// One program; the row count and the softmax length change between executions. An f16 length
// going from even to odd switches the workgroups to row pairs.
TEST(SoftmaxSymbolic, RowsAndLengthChange) {
  GraphBuilder b;
  auto rows = b.sym("rows", 1, 50);
  auto len = b.sym("len", 1, 1100);
  auto x = b.input("x", DType::f32, {rows, 113});
  auto h = b.input("h", DType::f16, {3, len});
  b.output("x_row", b.op1("softmax", {x}, {{"dim", -1}}));
  b.output("x_col", b.op1("log_softmax", {x}, {{"dim", 0}}));
  b.output("h_row", b.op1("softmax", {h}, {{"dim", -1}}));
  Program prog(shared_context(), b.build(), b.weights());
  EXPECT_EQ(route_of(prog, 0), "row");
  EXPECT_EQ(route_of(prog, 1), "strided");
  EXPECT_EQ(route_of(prog, 2), "row");
  uint32_t seed = 40;
  for (const auto& [r, n] : {std::pair<int64_t, int64_t>{5, 1030}, {47, 113}, {2, 1031}}) {
    const auto vx = random_floats(static_cast<size_t>(r) * 113, seed++);
    const auto hh = testing::to_f16(random_floats(3 * static_cast<size_t>(n), seed++));
    prog.set_input<float>("x", vx, {r, 113});
    prog.set_input<uint16_t>("h", hh, {3, n});
    prog.execute();
    EXPECT_TRUE(close(prog.read_f32("x_row"), to_float(softmax_ref(vx, {r, 113}, 1, false)))) << r;
    EXPECT_TRUE(close(prog.read_f32("x_col"), to_float(softmax_ref(vx, {r, 113}, 0, true)))) << r;
    const auto want = testing::round_f16(to_float(softmax_ref(testing::from_f16(hh), {3, n}, 1, false)));
    EXPECT_TRUE(close(prog.read_f32("h_row"), want, 1e-5, 1.0 / 1024)) << n;
  }
}

}  // namespace
}  // namespace wgx::runtime
