// Host q4gsw quantization: the bytes of a hand-checked example, the round trip within half a
// scale, determinism (a golden hash of a fixed input), f16/bf16 input, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "graph/storage.h"
#include "ops/quant/quantize.h"

namespace wgx::ops {
namespace {

using graph::DType;

// Uniform values in [-1, 1) from a fixed LCG: the same on every standard library.
std::vector<float> lcg_floats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 8388608.f - 1.f;
  }
  return v;
}

float scale_at(const std::vector<uint8_t>& bytes, size_t offset, size_t i, DType dtype) {
  if (dtype == DType::f16) {
    uint16_t h = 0;
    std::memcpy(&h, bytes.data() + offset + 2 * i, 2);
    return graph::f16_to_f32(h);
  }
  float f = 0;
  std::memcpy(&f, bytes.data() + offset + 4 * i, 4);
  return f;
}

TEST(Quantize, HandCheckedBytes) {
  // Row 0: max |w| = 7, so scale 1 and q = round(w): 0 -> nibble 8, 7 -> 15, -7 -> 1, 3.5 -> 4
  // (half away from zero) -> 12, -0.4 -> 0 -> 8, 0.6 -> 1 -> 9, the rest 0 -> 8.
  // Row 1: all zero: scale 0, every nibble 8.
  std::vector<float> w(64, 0.f);
  w[1] = 7.f;
  w[2] = -7.f;
  w[3] = 3.5f;
  w[4] = -0.4f;
  w[5] = 0.6f;
  for (DType scale : {DType::f32, DType::f16}) {
    const auto b = quantize_q4gsw(w.data(), 2, 32, 32, scale);
    ASSERT_EQ(b.size(), scale == DType::f32 ? 32u + 8u : 32u + 4u);
    EXPECT_EQ(b[0], 0xF8);  // k = 0 low (8), k = 1 high (15)
    EXPECT_EQ(b[1], 0xC1);  // k = 2 low (1), k = 3 high (12)
    EXPECT_EQ(b[2], 0x98);  // k = 4 low (8), k = 5 high (9)
    for (size_t i = 3; i < 32; ++i) EXPECT_EQ(b[i], 0x88) << i;
    if (scale == DType::f32) {
      EXPECT_EQ(std::vector<uint8_t>(b.begin() + 32, b.end()), (std::vector<uint8_t>{0, 0, 0x80, 0x3F, 0, 0, 0, 0}));
    } else {
      EXPECT_EQ(std::vector<uint8_t>(b.begin() + 32, b.end()), (std::vector<uint8_t>{0, 0x3C, 0, 0}));
    }
    const auto back = dequantize_q4gsw(b, 2, 32, 32, scale);
    EXPECT_EQ(back[1], 7.f);
    EXPECT_EQ(back[2], -7.f);
    EXPECT_EQ(back[3], 4.f);
    EXPECT_EQ(back[4], 0.f);
    EXPECT_EQ(back[5], 1.f);
    EXPECT_EQ(back[40], 0.f);
  }
}

TEST(Quantize, RoundTripWithinHalfAScale) {
  for (uint32_t group : {32u, 64u, 128u}) {
    for (DType dtype : {DType::f32, DType::f16}) {
      SCOPED_TRACE(std::to_string(group) + (dtype == DType::f16 ? " f16" : " f32"));
      const int64_t rows = 11, cols = 3 * group;
      auto w = lcg_floats(static_cast<size_t>(rows * cols), group);
      w[5] = 0.f;
      for (int64_t k = 0; k < group; ++k) w[cols + k] *= 1e-3f;  // a small group
      const auto b = quantize_q4gsw(w.data(), rows, cols, group, dtype);
      const auto back = dequantize_q4gsw(b, rows, cols, group, dtype);
      const size_t scales = static_cast<size_t>(rows * cols / 2);
      for (int64_t i = 0; i < rows * cols; ++i) {
        const size_t g = static_cast<size_t>(i / group);
        double max_abs = 0;
        for (int64_t j = 0; j < group; ++j) max_abs = std::max(max_abs, std::abs(double(w[g * group + j])));
        const double s = scale_at(b, scales, g, dtype);
        // The scale is max/7 as stored (f16: one rounding); the value within s/2 of the input,
        // plus the f32 rounding of (nibble - 8) * s.
        EXPECT_NEAR(s, max_abs / 7, max_abs / 7 * (dtype == DType::f16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24)));
        ASSERT_LE(std::abs(double(back[i]) - w[i]), s / 2 + std::abs(double(back[i])) * std::ldexp(1.0, -24)) << i;
      }
    }
  }
}

TEST(Quantize, DeterministicBytes) {
  const auto w = lcg_floats(7 * 128, 42);
  const auto a = quantize_q4gsw(w.data(), 7, 128, 64, DType::f16);
  EXPECT_EQ(a, quantize_q4gsw(w.data(), 7, 128, 64, DType::f16));
  // FNV-1a of the bytes: the same on every platform (the LCG input and IEEE math are fixed).
  uint64_t h = 1469598103934665603ull;
  for (uint8_t c : a) h = (h ^ c) * 1099511628211ull;
  EXPECT_EQ(h, 0xabe1611c2415f693ull) << std::hex << h;
}

TEST(Quantize, NibblesAreStdRoundOfTheScaledWeights) {
  // The quantizer rounds without calling std::round; its nibbles must be std::round's (half away
  // from zero) bit for bit: on random weights, and on groups whose every weight is a tie (k + 0.5
  // times the scale, positive and negative, the scale exact). The control: a round to nearest
  // even differs on the ties.
  const int64_t rows = 40, cols = 64;
  std::vector<float> w = lcg_floats(static_cast<size_t>(rows * cols), 7);
  for (int64_t r = 0; r < 8; ++r) {
    for (int64_t k = 0; k < 32; ++k) {
      // Group 0 of row r: max |w| = 7 (scale 1), the rest halves between -6.5 and 6.5.
      w[static_cast<size_t>(r * cols + k)] = k == 0 ? 7.f : static_cast<float>((k + r) % 14) - 6.5f;
    }
  }
  auto reference = [&](bool ties_to_even) {
    std::vector<uint8_t> nibbles(static_cast<size_t>(rows * cols));
    for (int64_t g = 0; g < rows * cols / 32; ++g) {
      double max_abs = 0;
      for (int64_t i = 0; i < 32; ++i) max_abs = std::max(max_abs, std::abs(double(w[static_cast<size_t>(g * 32 + i)])));
      const double s = static_cast<float>(max_abs / 7.0);
      for (int64_t i = 0; i < 32; ++i) {
        const double x = w[static_cast<size_t>(g * 32 + i)] / s;
        const double q = std::clamp(ties_to_even ? std::nearbyint(x) : std::round(x), -8.0, 7.0);
        nibbles[static_cast<size_t>(g * 32 + i)] = static_cast<uint8_t>(static_cast<int>(q) + 8);
      }
    }
    return nibbles;
  };
  const auto b = quantize_q4gsw(w.data(), rows, cols, 32, DType::f32);
  std::vector<uint8_t> got(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < got.size(); ++i) got[i] = (b[i / 2] >> (i % 2 == 0 ? 0 : 4)) & 0xF;
  EXPECT_EQ(got, reference(false));
  EXPECT_NE(got, reference(true));
}

TEST(Quantize, FromF16AndBf16) {
  const auto w = lcg_floats(4 * 64, 7);
  std::vector<uint16_t> h(w.size()), bf(w.size());
  std::vector<float> hv(w.size()), bv(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    h[i] = graph::f32_to_f16(w[i]);
    hv[i] = graph::f16_to_f32(h[i]);
    uint32_t bits = 0;
    std::memcpy(&bits, &w[i], 4);
    bf[i] = static_cast<uint16_t>(bits >> 16);  // truncation: any bf16 value will do
    bv[i] = graph::bf16_to_f32(bf[i]);
  }
  EXPECT_EQ(quantize_q4gsw_f16(h.data(), 4, 64, 32, DType::f32), quantize_q4gsw(hv.data(), 4, 64, 32, DType::f32));
  EXPECT_EQ(quantize_q4gsw_bf16(bf.data(), 4, 64, 32, DType::f16), quantize_q4gsw(bv.data(), 4, 64, 32, DType::f16));
}

TEST(Quantize, F16ScalesSaturate) {
  std::vector<float> w(32, 0.f);
  w[0] = 1e6f;  // max / 7 is beyond f16: the scale saturates at 65504, the value clamps at 7
  const auto b = quantize_q4gsw(w.data(), 1, 32, 32, DType::f16);
  EXPECT_EQ(scale_at(b, 16, 0, DType::f16), 65504.f);
  EXPECT_EQ(dequantize_q4gsw(b, 1, 32, 32, DType::f16)[0], 7 * 65504.f);
}

TEST(Quantize, RejectsBadArguments) {
  std::vector<float> w(128, 1.f);
  EXPECT_THROW(quantize_q4gsw(w.data(), 2, 64, 48, DType::f32), std::invalid_argument);
  EXPECT_THROW(quantize_q4gsw(w.data(), 2, 48, 32, DType::f32), std::invalid_argument);
  EXPECT_THROW(quantize_q4gsw(w.data(), 2, 64, 32, DType::bf16), std::invalid_argument);
  w[3] = std::nanf("");
  EXPECT_THROW(quantize_q4gsw(w.data(), 2, 64, 32, DType::f32), std::invalid_argument);
  w[3] = INFINITY;
  EXPECT_THROW(quantize_q4gsw(w.data(), 2, 64, 32, DType::f32), std::invalid_argument);
  EXPECT_THROW(dequantize_q4gsw(std::vector<uint8_t>(10), 2, 64, 32, DType::f32), std::invalid_argument);
}

}  // namespace
}  // namespace wgx::ops
