#include "ops/quant/quantize.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "graph/graph.h"
#include "graph/storage.h"

namespace wgx::ops {

namespace {

using graph::DType;

graph::Q4Layout layout_of(int64_t rows, int64_t cols, uint32_t group_size, DType scale_dtype) {
  if (group_size != 32 && group_size != 64 && group_size != 128) {
    throw std::invalid_argument("q4gsw group size " + std::to_string(group_size) + " is not 32, 64 or 128");
  }
  if (scale_dtype != DType::f32 && scale_dtype != DType::f16) {
    throw std::invalid_argument("q4gsw scales must be f32 or f16");
  }
  const auto l = graph::q4gsw_layout({rows, cols}, {group_size, scale_dtype});
  if (!l) {
    throw std::invalid_argument("q4gsw: " + std::to_string(rows) + " x " + std::to_string(cols) +
                                " does not split into groups of " + std::to_string(group_size));
  }
  return *l;
}

constexpr uint16_t kF16Max = 0x7bff;  // 65504

// std::round (half away from zero) for |x| < 2^51, without the library call that was a fifth of
// converting a bf16 checkpoint: adding and subtracting 1.5 * 2^52 rounds x to the nearest
// integer, ties to even (IEEE double arithmetic, the default rounding mode); a tie then moves
// away from zero (x - n is exactly +-0.5 there).
double round_half_away(double x) {
  constexpr double kShift = 6755399441055744.0;
  const double n = (x + kShift) - kShift;
  const double d = x - n;
  // A tie (|d| = 0.5) went toward zero where d has x's sign; n + 2d is then the integer away
  // from zero. A select on doubles, no branch, so that loops over it vectorize.
  const double away = n + 2.0 * d;
  const bool tie = (std::abs(d) == 0.5) & (d * x > 0);
  return tie ? away : n;
}

// The scale for a group's largest magnitude, as stored, and its value.
float store_scale(double max_abs, DType dtype, uint8_t* at) {
  const float s = static_cast<float>(max_abs / 7.0);
  if (dtype == DType::f32) {
    std::memcpy(at, &s, 4);
    return s;
  }
  uint16_t h = graph::f32_to_f16(s);
  if ((h & 0x7fff) > kF16Max) h = kF16Max;  // saturate rather than store infinity
  std::memcpy(at, &h, 2);
  return graph::f16_to_f32(h);
}

}  // namespace

std::vector<uint8_t> quantize_q4gsw(const float* w, int64_t rows, int64_t cols, uint32_t group_size,
                                    DType scale_dtype) {
  const graph::Q4Layout l = layout_of(rows, cols, group_size, scale_dtype);
  const size_t scale_size = scale_dtype == DType::f32 ? 4 : 2;
  std::vector<uint8_t> out(l.total_bytes, 0);
  // Written so that the compiler vectorizes the passes over a group: the largest magnitude as
  // the largest of the floats' bits without the sign (which orders finite magnitudes, and puts
  // infinities and NaN above them all), then every quotient rounded, then the nibbles in pairs.
  double q[128];
  for (uint64_t r = 0; r < l.rows; ++r) {
    for (uint64_t g = 0; g < l.groups_per_row; ++g) {
      const float* v = w + r * l.cols + g * group_size;
      uint32_t max_bits = 0;
      for (uint32_t i = 0; i < group_size; ++i) {
        const uint32_t b = std::bit_cast<uint32_t>(v[i]) & 0x7fffffffu;
        max_bits = b > max_bits ? b : max_bits;
      }
      if (max_bits >= 0x7f800000u) throw std::invalid_argument("q4gsw: a weight is not finite");
      const double max_abs = std::bit_cast<float>(max_bits);
      const uint64_t group = r * l.groups_per_row + g;
      const double s = store_scale(max_abs, scale_dtype, out.data() + l.scales_offset + group * scale_size);
      if (s > 0) {
        for (uint32_t i = 0; i < group_size; ++i) q[i] = v[i];
        for (uint32_t i = 0; i < group_size; ++i) {
          const double t = round_half_away(q[i] / s);
          const double lo = t < -8.0 ? -8.0 : t;
          q[i] = lo > 7.0 ? 7.0 : lo;
        }
      } else {
        std::fill_n(q, group_size, 0.0);
      }
      uint8_t* packed = out.data() + (r * l.cols + g * group_size) / 2;  // groups are even-sized
      for (uint32_t i = 0; i < group_size / 2; ++i) {
        packed[i] = static_cast<uint8_t>((static_cast<int>(q[2 * i]) + 8) | ((static_cast<int>(q[2 * i + 1]) + 8) << 4));
      }
    }
  }
  return out;
}

std::vector<uint8_t> quantize_q4gsw_f16(const uint16_t* w, int64_t rows, int64_t cols, uint32_t group_size,
                                        DType scale_dtype) {
  std::vector<float> f(static_cast<size_t>(std::max<int64_t>(rows * cols, 0)));
  for (size_t i = 0; i < f.size(); ++i) f[i] = graph::f16_to_f32(w[i]);
  return quantize_q4gsw(f.data(), rows, cols, group_size, scale_dtype);
}

std::vector<uint8_t> quantize_q4gsw_bf16(const uint16_t* w, int64_t rows, int64_t cols, uint32_t group_size,
                                         DType scale_dtype) {
  std::vector<float> f(static_cast<size_t>(std::max<int64_t>(rows * cols, 0)));
  for (size_t i = 0; i < f.size(); ++i) f[i] = graph::bf16_to_f32(w[i]);
  return quantize_q4gsw(f.data(), rows, cols, group_size, scale_dtype);
}

std::vector<float> dequantize_q4gsw(const std::vector<uint8_t>& bytes, int64_t rows, int64_t cols,
                                    uint32_t group_size, DType scale_dtype) {
  const graph::Q4Layout l = layout_of(rows, cols, group_size, scale_dtype);
  if (bytes.size() < l.total_bytes) throw std::invalid_argument("q4gsw: too few bytes for the layout");
  std::vector<float> out(l.rows * l.cols);
  for (uint64_t r = 0; r < l.rows; ++r) {
    for (uint64_t k = 0; k < l.cols; ++k) {
      const uint64_t group = r * l.groups_per_row + k / group_size;
      float s = 0;
      if (scale_dtype == DType::f32) {
        std::memcpy(&s, bytes.data() + l.scales_offset + 4 * group, 4);
      } else {
        uint16_t h = 0;
        std::memcpy(&h, bytes.data() + l.scales_offset + 2 * group, 2);
        s = graph::f16_to_f32(h);
      }
      const uint8_t byte = bytes[(r * l.cols + k) / 2];
      const int nibble = k % 2 == 0 ? byte & 15 : byte >> 4;
      out[r * l.cols + k] = static_cast<float>(nibble - 8) * s;
    }
  }
  return out;
}

}  // namespace wgx::ops
