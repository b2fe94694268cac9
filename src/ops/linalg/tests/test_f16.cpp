// Products in packed f16 storage (operands, bias and output f16, accumulation in f32) against a
// double reference computed from the f16-rounded inputs, held to the bound in
// linalg_test_util.h: the f32 dot-product error plus one f16 rounding of the result. Even N
// writes whole f16 words directly; odd N (words straddle rows and tiles) goes through an f32
// scratch and a pack pass: one more dispatch.
#include "graph/builder.h"
#include "linalg_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::from_f16;
using testing::random_floats;
using testing::shared_context;
using testing::to_f16;

struct Data {
  std::vector<uint16_t> bits;
  std::vector<float> values;  // what the bits hold
};

Data random_f16(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  Data d{to_f16(random_floats(n, seed, lo, hi)), {}};
  d.values = from_f16(d.bits);
  return d;
}

struct LinearCase {
  const char* name;
  int64_t m, k, n;
  bool bias;
  const char* route;
};

struct MatmulCase {
  const char* name;
  std::vector<int64_t> a, b;
  const char* route;
};

size_t count(const std::vector<int64_t>& s) {
  size_t n = 1;
  for (int64_t d : s) n *= static_cast<size_t>(d);
  return n;
}

TEST(F16, ProductsRoundOnceFromF32Accumulation) {
  const std::vector<LinearCase> linears{
      {"even_tiled", 37, 113, 38, true, "tiled"},   // direct f16 words
      {"odd_tiled", 11, 130, 37, false, "tiled"},   // through f32
      {"even_gemv", 3, 132, 40, true, "gemv"},      // vec4-aligned
      {"odd_gemv", 1, 37, 11, true, "gemv"},
  };
  const std::vector<MatmulCase> matmuls{
      {"mm_even_gemv", {2, 1, 36}, {2, 36, 44}, "gemv"},
      {"mm_odd_gemv", {3, 37}, {37, 11}, "gemv"},
  };
  GraphBuilder b;
  uint32_t seed = 200;
  std::vector<Data> weights, biases;
  for (const LinearCase& c : linears) {
    weights.push_back(random_f16(static_cast<size_t>(c.n * c.k), seed++));
    biases.push_back(c.bias ? random_f16(static_cast<size_t>(c.n), seed++) : Data{});
    std::vector<graph::ValueId> in{
        b.input(std::string(c.name) + ".x", DType::f16, {c.m, c.k}),
        b.constant(std::string(c.name) + ".w", DType::f16, {c.n, c.k}, testing::bytes_of(weights.back().bits))};
    if (c.bias) {
      in.push_back(b.constant(std::string(c.name) + ".b", DType::f16, {c.n}, testing::bytes_of(biases.back().bits)));
    }
    b.output(c.name, b.op1("linear", in));
  }
  for (const MatmulCase& c : matmuls) {
    graph::Shape sa(c.a.begin(), c.a.end()), sb(c.b.begin(), c.b.end());
    b.output(c.name, b.op1("matmul", {b.input(std::string(c.name) + ".a", DType::f16, sa),
                                      b.input(std::string(c.name) + ".b", DType::f16, sb)}));
  }
  Program prog(shared_context(), b.build(), b.weights());

  std::vector<Data> xs;
  for (const LinearCase& c : linears) {
    xs.push_back(random_f16(static_cast<size_t>(c.m * c.k), seed++));
    prog.set_input<uint16_t>(std::string(c.name) + ".x", xs.back().bits, {c.m, c.k});
  }
  std::vector<std::pair<Data, Data>> operands;
  for (const MatmulCase& c : matmuls) {
    Data a = random_f16(count(c.a), seed++);
    operands.emplace_back(std::move(a), random_f16(count(c.b), seed++));
    prog.set_input<uint16_t>(std::string(c.name) + ".a", operands.back().first.bits, c.a);
    prog.set_input<uint16_t>(std::string(c.name) + ".b", operands.back().second.bits, c.b);
  }
  prog.execute();
  for (size_t i = 0; i < linears.size(); ++i) {
    const LinearCase& c = linears[i];
    SCOPED_TRACE(c.name);
    const auto want = testing::linear_ref(xs[i].values, {c.m, c.k}, weights[i].values, c.n, biases[i].values);
    EXPECT_TRUE(testing::within_bound(prog.read_f32(c.name), want, c.k, true));
    EXPECT_EQ(prog.routes().at(i).route, c.route) << testing::rejected(prog.routes().at(i));
  }
  for (size_t i = 0; i < matmuls.size(); ++i) {
    const MatmulCase& c = matmuls[i];
    SCOPED_TRACE(c.name);
    const auto want = testing::matmul_ref(operands[i].first.values, c.a, operands[i].second.values, c.b);
    EXPECT_TRUE(testing::within_bound(prog.read_f32(c.name), want, c.a.back(), true));
    EXPECT_EQ(prog.routes().at(linears.size() + i).route, c.route);
  }
  // One dispatch per node, and a pack pass for each of the three odd-N outputs.
  EXPECT_EQ(prog.dispatches_per_execute(), linears.size() + matmuls.size() + 3);
}

TEST(F16, BoundRejectsResultsTwoUlpsOff) {
  // Negative control: the f16 bound admits the exact result and one rounding, but not two f16
  // ulps of error, as a second rounding or an f16 accumulator would make (|y| ~ 20 here).
  const auto x = random_floats(16 * 33, 1, 0.5f, 1.f), w = random_floats(7 * 33, 2, 0.5f, 1.f);
  const auto want = testing::linear_ref(from_f16(to_f16(x)), {16, 33}, from_f16(to_f16(w)), 7, {});
  std::vector<float> rounded(want.values), off(want.values);
  for (float& v : rounded) v = graph::f16_to_f32(graph::f32_to_f16(v));
  for (float& v : off) v += std::ldexp(std::abs(v), -9);
  EXPECT_TRUE(testing::within_bound(want.values, want, 33, true));
  EXPECT_TRUE(testing::within_bound(rounded, want, 33, true));
  EXPECT_FALSE(testing::within_bound(off, want, 33, true));
}

}  // namespace
}  // namespace wgx::runtime
