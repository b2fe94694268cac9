// Shared by the linalg tests: double-precision references for torch.matmul and linear, and the
// error bound the products are held to.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "numeric_test_util.h"

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
  const DotReference d = linear_dots(x, static_cast<int64_t>(x.size()) / k, k, w, n, bias);
  Reference r{{d.values.begin(), d.values.end()}, d.magnitude, x_shape};
  r.shape.back() = n;
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

// The bound on each element: within_dot_bound over K products and one more term for the bias.
inline ::testing::AssertionResult within_bound(const std::vector<float>& got, const Reference& want, int64_t k,
                                               bool f16 = false) {
  return within_dot_bound(got, want.values, want.magnitude, k + 1, f16);
}

}  // namespace wgx::runtime::testing
