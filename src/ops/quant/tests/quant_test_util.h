// Shared by the quant tests: q4gsw weights with their dequantized values, double references,
// the error bound, and one program holding every node the GPU tests check (a pipeline costs
// SwiftShader a second or more to compile, and pipelines are compiled per program).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "ops/quant/quantize.h"
#include "numeric_test_util.h"

namespace wgx::runtime::testing {

using graph::DType;

// Values as a tensor of `dtype` holds them (f16: rounded), and the bytes to hand over.
struct Data {
  std::vector<float> values;
  std::vector<uint8_t> bytes;
};
inline Data data_of(const std::vector<float>& v, DType dtype) {
  if (dtype == DType::f16) {
    const auto bits = to_f16(v);
    return {from_f16(bits), bytes_of(bits)};
  }
  return {v, bytes_of(v)};
}

// A q4gsw [rows, cols] weight from uniform values in [-1, 1]: its bytes and what they hold.
inline Data q4_weight(int64_t rows, int64_t cols, uint32_t group, DType scale, uint32_t seed) {
  const auto w = random_floats(static_cast<size_t>(rows * cols), seed, -1.f, 1.f);
  Data d;
  d.bytes = ops::quantize_q4gsw(w.data(), rows, cols, group, scale);
  d.values = ops::dequantize_q4gsw(d.bytes, rows, cols, group, scale);
  return d;
}

// Products' references: testing::linear_dots.
using Reference = DotReference;

// The bound on each element: within_dot_bound over K products, plus one term for the bias and
// one for each group scale, which the gemv kernels apply to a group's sum and the tiled ones to
// each weight.
inline ::testing::AssertionResult within_bound(const std::vector<float>& got, const Reference& want, int64_t k,
                                               bool f16) {
  return within_dot_bound(got, want.values, want.magnitude, k + 3, f16);
}

}  // namespace wgx::runtime::testing
