// f16 outputs past the f16 range, from every reduce kernel that packs f16 (rownorm, softmax_cols,
// reduce): +-inf, as a cast gives them. pack2x16float alone is undefined there.
#include <limits>

#include "graph/builder.h"
#include "reduce_test_util.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::route_of;
using testing::shared_context;

constexpr float kInf = std::numeric_limits<float>::infinity();

// One program (each variant compiles once). Exact values: the rms of each row of `x` is 1, so
// x[0] * w[0] is +-120000; log_softmax of {-60000, 60000} is {-120000, 0} (log 1 may not be
// exactly 0); each sum is +-90000.
TEST(ReduceF16, OverflowSaturatesToInfinity) {
  GraphBuilder b;
  auto x = b.input("x", DType::f16, {2, 4});
  auto w = b.input("w", DType::f16, {4});
  auto s = b.input("s", DType::f16, {2, 2});
  auto sums = b.input("sums", DType::f16, {2, 3});
  b.output("rms", b.op1("rms_norm", {x, w}));
  b.output("log_row", b.op1("log_softmax", {s}, {{"dim", 1}}));
  b.output("log_col", b.op1("log_softmax", {s}, {{"dim", 0}}));
  b.output("sum", b.op1("sum", {sums}, {{"dims", std::vector<int64_t>{-1}}, {"keepdim", false}}));
  Program prog(shared_context(), b.build(), b.weights());
  prog.set_input<uint16_t>("x", testing::to_f16({2.f, 0.f, 0.f, 0.f, -2.f, 0.f, 0.f, 0.f}), {2, 4});
  prog.set_input<uint16_t>("w", testing::to_f16({60000.f, 1.f, 1.f, 1.f}), {4});
  prog.set_input<uint16_t>("s", testing::to_f16({-60000.f, 60000.f, 60000.f, -60000.f}), {2, 2});
  prog.set_input<uint16_t>("sums", testing::to_f16({30000.f, 30000.f, 30000.f, -30000.f, -30000.f, -30000.f}),
                           {2, 3});
  prog.execute();

  EXPECT_EQ(prog.read_f32("rms"), (std::vector<float>{kInf, 0.f, 0.f, 0.f, -kInf, 0.f, 0.f, 0.f}));
  for (const char* out : {"log_row", "log_col"}) {
    const auto got = prog.read_f32(out);
    ASSERT_EQ(got.size(), 4u) << out;
    EXPECT_EQ(got[0], -kInf) << out;
    EXPECT_NEAR(got[1], 0.f, 1e-3) << out;
    EXPECT_NEAR(got[2], 0.f, 1e-3) << out;
    EXPECT_EQ(got[3], -kInf) << out;
  }
  EXPECT_EQ(prog.read_f32("sum"), (std::vector<float>{kInf, -kInf}));
  // The kernels each output came from: rownorm, rownorm, softmax_cols, reduce.
  EXPECT_EQ(route_of(prog, 0), "row");
  EXPECT_EQ(route_of(prog, 1), "row");
  EXPECT_EQ(route_of(prog, 2), "strided");
  EXPECT_EQ(route_of(prog, 3), "row");
}

}  // namespace
}  // namespace wgx::runtime
