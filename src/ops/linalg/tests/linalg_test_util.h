// Shared by the linalg tests: double-precision references for torch.matmul and linear, f16 data,
// and the error bound the products are held to.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "graph/storage.h"
#include "runtime/program.h"
#include "runtime_test_util.h"

namespace wgx::runtime::testing {

// A product's reference: values and, per element, sum |a_k * b_k| (+ |bias|) for the bound.
struct Reference {
  std::vector<float> values;
  std::vector<double> magnitude;
  std::vector<int64_t> shape;
};

// x [..., K] @ w[N, K]^T + bias (empty: none).
inline Reference linear_ref(const std::vector<float>& x, const std::vector<int64_t>& x_shape,
                            const std::vector<float>& w, int64_t n, const std::vector<float>& bias) {
  const int64_t k = x_shape.back();
  const int64_t m = static_cast<int64_t>(x.size()) / k;
  Reference r;
  r.shape = x_shape;
  r.shape.back() = n;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = bias.empty() ? 0 : bias[j], mag = bias.empty() ? 0 : std::abs(bias[j]);
      for (int64_t t = 0; t < k; ++t) {
        const double p = double(x[i * k + t]) * w[j * k + t];
        s += p;
        mag += std::abs(p);
      }
      r.values.push_back(static_cast<float>(s));
      r.magnitude.push_back(mag);
    }
  }
  return r;
}

// torch.matmul: 1-D operands get a dim of 1 that is removed again; batch dims broadcast.
inline Reference matmul_ref(const std::vector<float>& a, std::vector<int64_t> sa, const std::vector<float>& b,
                            std::vector<int64_t> sb) {
  const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  const size_t rank = std::max(sa.size(), sb.size()) - 2;
  auto dim = [rank](const std::vector<int64_t>& s, size_t d) {  // batch dim d, right-aligned
    const size_t lead = s.size() - 2;
    return d + lead >= rank ? s[d + lead - rank] : int64_t{1};
  };
  Reference r;
  std::vector<int64_t> batch(rank);
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    batch[d] = std::max(dim(sa, d), dim(sb, d));
    count *= batch[d];
  }
  for (int64_t bi = 0; bi < count; ++bi) {
    int64_t rem = bi, ia = 0, ib = 0, stride_a = 1, stride_b = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t c = rem % batch[d];
      rem /= batch[d];
      if (dim(sa, d) != 1) ia += c * stride_a;
      if (dim(sb, d) != 1) ib += c * stride_b;
      stride_a *= dim(sa, d);
      stride_b *= dim(sb, d);
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, mag = 0;
        for (int64_t t = 0; t < k; ++t) {
          const double p = double(a[(ia * m + i) * k + t]) * b[(ib * k + t) * n + j];
          s += p;
          mag += std::abs(p);
        }
        r.values.push_back(static_cast<float>(s));
        r.magnitude.push_back(mag);
      }
    }
  }
  r.shape = batch;
  if (!a_vec) r.shape.push_back(m);
  if (!b_vec) r.shape.push_back(n);
  return r;
}

// The bound on each element. f32: the project's tolerance (abs 1e-4 or rel 1e-3), or else the
// worst-case error of a length-K dot product summed in f32 in any order, gamma_{K+1} * sum|a_k
// b_k| with gamma_n = n u / (1 - n u), u = 2^-24 (Higham, Accuracy and Stability of Numerical
// Algorithms, 3.1; one more term for the bias): long sums with cancellation can legitimately
// exceed rel 1e-3 of a small result. f16 output (`f16`, reference from the f16-rounded inputs):
// that f32 error plus one rounding to f16, which WGSL lets go either way: one f16 ulp, 2^-10
// relative, or 2^-24 absolute among subnormals.
inline ::testing::AssertionResult within_bound(const std::vector<float>& got, const Reference& want, int64_t k,
                                               bool f16 = false) {
  if (got.size() != want.values.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.values.size();
  }
  const double u = std::ldexp(1.0, -24), n = static_cast<double>(k + 1);
  const double gamma = n * u / (1 - n * u);
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want.values[i], err = std::abs(g - w);
    const double dot_bound = gamma * want.magnitude[i];
    const bool ok = f16 ? err <= dot_bound * (1 + std::ldexp(1.0, -10)) + std::ldexp(std::abs(w), -10) + u
                        : err <= 1e-4 || err <= 1e-3 * std::abs(w) || err <= dot_bound;
    if (!ok) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w << " (sum |a b| "
                                           << want.magnitude[i] << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// f16 bits of `v` and the values they hold.
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

// "route: why" of every route tried before the chosen one, joined.
inline std::string rejected(const RouteChoice& c) {
  std::string s;
  for (const auto& r : c.rejected) s += r + "; ";
  return s;
}

}  // namespace wgx::runtime::testing
