// Numeric helpers shared by the op tests: f16 data on the host (bits, the values they hold, one
// rounding), raw bytes of host vectors, and double references of linear products with the error
// bound of f32 dot products.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "graph/storage.h"
#include "runtime_test_util.h"

namespace wgx::runtime::testing {

// f16 bits of each value (rounded to nearest even, as a cast does).
inline std::vector<uint16_t> to_f16(const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = graph::f32_to_f16(v[i]);
  return h;
}
// The values f16 bits hold.
inline std::vector<float> from_f16(const std::vector<uint16_t>& h) {
  std::vector<float> v(h.size());
  for (size_t i = 0; i < h.size(); ++i) v[i] = graph::f16_to_f32(h[i]);
  return v;
}
// Values as f16 storage holds them: each rounded once to the nearest f16.
inline std::vector<float> round_f16(const std::vector<float>& v) { return from_f16(to_f16(v)); }
inline float round_f16(double x) { return graph::f16_to_f32(graph::f32_to_f16(static_cast<float>(x))); }

inline std::vector<uint8_t> bytes_of(const std::vector<uint16_t>& h) {
  std::vector<uint8_t> b(h.size() * 2);
  std::memcpy(b.data(), h.data(), b.size());
  return b;
}

// The first `n` elements of type T in `bytes`.
template <typename T>
std::vector<T> from_bytes(const std::vector<uint8_t>& bytes, size_t n) {
  std::vector<T> out(n);
  std::memcpy(out.data(), bytes.data(), n * sizeof(T));
  return out;
}

// x [m, k] @ w [n, k]^T + bias (empty: none) in double, row-major [m, n], and per element the
// sum |x w| + |bias|: the magnitude within_dot_bound takes.
struct DotReference {
  std::vector<double> values, magnitude;
};
inline DotReference linear_dots(const std::vector<float>& x, int64_t m, int64_t k, const std::vector<float>& w,
                                int64_t n, const std::vector<float>& bias) {
  DotReference r;
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

// Whether each got[i] is within the error bound of an f32 sum of `terms` products against the
// exact want[i], magnitude[i] being the sum of the products' absolute values. f32 output: the
// project's tolerance (abs 1e-4 or rel 1e-3), or else gamma_terms * magnitude, gamma_n =
// n u / (1 - n u), u = 2^-24: the worst-case error of such a sum in f32 in any order (Higham,
// Accuracy and Stability of Numerical Algorithms, 3.1); long sums with cancellation can
// legitimately exceed rel 1e-3 of a small result. f16 output (`f16`, the reference from the
// f16-rounded inputs): that bound plus one rounding to f16, which WGSL lets go either way: one
// f16 ulp, 2^-10 relative, or 2^-24 absolute among subnormals.
template <typename T>
::testing::AssertionResult within_dot_bound(const std::vector<float>& got, const std::vector<T>& want,
                                            const std::vector<double>& magnitude, int64_t terms, bool f16) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  const double u = std::ldexp(1.0, -24), n = static_cast<double>(terms);
  const double gamma = n * u / (1 - n * u);
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i], err = std::abs(g - w);
    const double dot_bound = gamma * magnitude[i];
    const bool ok = f16 ? err <= dot_bound * (1 + std::ldexp(1.0, -10)) + std::ldexp(std::abs(w), -10) + u
                        : err <= 1e-4 || err <= 1e-3 * std::abs(w) || err <= dot_bound;
    if (!ok) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w << " (sum |a b| "
                                           << magnitude[i] << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace wgx::runtime::testing
