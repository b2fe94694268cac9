// swiglu against a double reference at prime sizes: f32 with a symbolic leading dim that changes
// between executions, and packed f16 with an odd element count (a zero tail).
#include <cmath>

#include "graph/builder.h"
#include "runtime/program.h"
#include "numeric_test_util.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close;
using testing::random_floats;
using testing::shared_context;

std::vector<float> swiglu_ref(const std::vector<float>& gate, const std::vector<float>& up) {
  std::vector<float> out(gate.size());
  for (size_t i = 0; i < gate.size(); ++i) {
    const double g = gate[i];
    out[i] = static_cast<float>(g / (1 + std::exp(-g)) * up[i]);
  }
  return out;
}

TEST(Swiglu, F32AtPrimeSizesAsRowsChange) {
  GraphBuilder b;
  auto seq = b.sym("seq", 1, 37);
  auto gate = b.input("gate", DType::f32, {seq, 113});
  auto up = b.input("up", DType::f32, {seq, 113});
  b.output("y", b.op1("swiglu", {gate, up}));
  Program prog(shared_context(), b.build(), b.weights());
  for (int64_t rows : {37, 11}) {
    const size_t n = static_cast<size_t>(rows * 113);
    // Wide gates: silu's tails (exp of large arguments) must not overflow.
    const auto g = random_floats(n, 20 + static_cast<uint32_t>(rows), -30.f, 30.f), u = random_floats(n, 21);
    prog.set_input<float>("gate", g, {rows, 113});
    prog.set_input<float>("up", u, {rows, 113});
    prog.set_sym("seq", rows);
    prog.execute();
    EXPECT_TRUE(close(prog.read_f32("y"), swiglu_ref(g, u))) << rows;
  }
  EXPECT_EQ(prog.routes().at(0).route, "swiglu");
}

TEST(Swiglu, F16OddSizeRoundsOnce) {
  GraphBuilder b;
  auto gate = b.input("gate", DType::f16, {11, 13});
  auto up = b.input("up", DType::f16, {11, 13});
  b.output("y", b.op1("swiglu", {gate, up}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto g = testing::round_f16(random_floats(143, 22, -8.f, 8.f));
  const auto u = testing::round_f16(random_floats(143, 23));
  prog.set_input<uint16_t>("gate", testing::to_f16(g), {11, 13});
  prog.set_input<uint16_t>("up", testing::to_f16(u), {11, 13});
  prog.execute();
  EXPECT_TRUE(close(prog.read_f32("y"), swiglu_ref(g, u), testing::kF16Abs, testing::kF16Rel));
  const auto bytes = prog.read_storage("y");
  ASSERT_EQ(bytes.size(), 288u);  // 143 halves in whole words
  EXPECT_EQ(bytes[286], 0);
  EXPECT_EQ(bytes[287], 0);
  EXPECT_EQ(prog.routes().at(0).route, "swiglu");
}

}  // namespace
}  // namespace wgx::runtime
