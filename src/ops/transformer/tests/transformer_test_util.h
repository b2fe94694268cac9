// Helpers for the transformer family's tests: f16 conversion of host data.
#pragma once

#include <cstdint>
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
// Values as f16 storage holds them.
inline std::vector<float> round_f16(const std::vector<float>& v) { return from_f16(to_f16(v)); }

// The f16 bound of these tests: the kernels compute in f32 and round once, so within an f16 ulp
// (rel 2^-10, twice the rounding error) of the exact value, or 1e-4 where f16 is subnormal.
constexpr double kF16Abs = 1e-4;
constexpr double kF16Rel = 1.0 / 1024;

}  // namespace wgx::runtime::testing
