// Helpers shared by the unary family's tests: f16 rounding of host data and a comparison that also
// expects infinities and NaNs, which testing::close cannot express.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "graph/storage.h"

namespace wgx::runtime::testing {

inline std::vector<uint16_t> to_f16(const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = graph::f32_to_f16(v[i]);
  return h;
}

inline std::vector<float> from_f16(const std::vector<uint16_t>& h) {
  std::vector<float> v(h.size());
  for (size_t i = 0; i < h.size(); ++i) v[i] = graph::f16_to_f32(h[i]);
  return v;
}

// The value as f16 storage would hold it: rounded once to the nearest f16.
inline float round_f16(double x) { return graph::f16_to_f32(graph::f32_to_f16(static_cast<float>(x))); }

// NaN where NaN is wanted, the same infinity where one is wanted, and elsewhere within the f32
// tolerance of testing::close (abs 1e-4 OR rel 1e-3): for outputs with special values.
inline ::testing::AssertionResult close_special(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    const bool ok = std::isnan(w)   ? std::isnan(g)
                    : std::isinf(w) ? g == w
                                    : std::abs(g - w) <= 1e-4 || std::abs(g - w) <= 1e-3 * std::abs(w);
    if (!ok) return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

template <typename T>
std::vector<T> from_bytes(const std::vector<uint8_t>& bytes, size_t n) {
  std::vector<T> out(n);
  std::memcpy(out.data(), bytes.data(), n * sizeof(T));
  return out;
}

}  // namespace wgx::runtime::testing
