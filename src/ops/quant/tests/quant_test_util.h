// Shared by the quant tests: q4gsw weights with their dequantized values, double references,
// the error bound, and one program holding every node the GPU tests check (a pipeline costs
// SwiftShader a second or more to compile, and pipelines are compiled per program).
#pragma once

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "graph/storage.h"
#include "ops/quant/quantize.h"
#include "runtime/program.h"
#include "runtime_test_util.h"

namespace wgx::runtime::testing {

using graph::DType;

inline std::vector<uint16_t> f16_bits(const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = graph::f32_to_f16(v[i]);
  return h;
}
inline std::vector<float> f16_values(const std::vector<uint16_t>& h) {
  std::vector<float> v(h.size());
  for (size_t i = 0; i < h.size(); ++i) v[i] = graph::f16_to_f32(h[i]);
  return v;
}
inline std::vector<uint8_t> bytes_of(const std::vector<uint16_t>& h) {
  std::vector<uint8_t> b(h.size() * 2);
  std::memcpy(b.data(), h.data(), b.size());
  return b;
}

// Values as a tensor of `dtype` holds them (f16: rounded), and the bytes to hand over.
struct Data {
  std::vector<float> values;
  std::vector<uint8_t> bytes;
};
inline Data data_of(const std::vector<float>& v, DType dtype) {
  if (dtype == DType::f16) {
    const auto bits = f16_bits(v);
    return {f16_values(bits), bytes_of(bits)};
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

// x [m, k] @ w[n, k]^T + bias (empty: none) in double, and per element sum |x w| + |bias|.
struct Reference {
  std::vector<double> values, magnitude;
};
inline Reference linear_ref(const std::vector<float>& x, int64_t m, int64_t k, const std::vector<float>& w,
                            int64_t n, const std::vector<float>& bias) {
  Reference r;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = bias.empty() ? 0 : bias[j], mag = bias.empty() ? 0 : std::abs(bias[j]);
      for (int64_t t = 0; t < k; ++t) {
        const double p = double(x[i * k + t]) * w[j * k + t];
        s += p;
        mag += std::abs(p);
      }
      r.values.push_back(s);
      r.magnitude.push_back(mag);
    }
  }
  return r;
}

// The bound on each element. f32 output: abs 1e-4 OR rel 1e-3, or else gamma_{K+3} * (sum |x w|
// + |bias|), gamma_n = n u / (1 - n u), u = 2^-24: the worst case of a length-K f32 dot product
// in any order (Higham 3.1), plus one term for the bias and one for each group scale, which the
// gemv kernels apply to a group's sum and the tiled ones to each weight; long sums with
// cancellation may exceed rel 1e-3 of a small result. f16 output: that bound, plus one rounding
// to f16 either way (2^-10 relative, 2^-24 absolute among subnormals).
inline ::testing::AssertionResult within_bound(const std::vector<float>& got, const Reference& want, int64_t k,
                                               bool f16) {
  if (got.size() != want.values.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.values.size();
  }
  const double u = std::ldexp(1.0, -24), n = static_cast<double>(k + 3);
  const double gamma = n * u / (1 - n * u);
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want.values[i], err = std::abs(g - w);
    const double dot = gamma * want.magnitude[i];
    const bool ok = f16 ? err <= dot * (1 + std::ldexp(1.0, -10)) + std::ldexp(std::abs(w), -10) + u
                        : err <= 1e-4 || err <= 1e-3 * std::abs(w) || err <= dot;
    if (!ok) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w << " (sum |x w| "
                                           << want.magnitude[i] << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// "route: why" of every route tried before the chosen one, joined.
inline std::string rejected(const RouteChoice& c) {
  std::string s;
  for (const auto& r : c.rejected) s += r + "; ";
  return s;
}

}  // namespace wgx::runtime::testing
