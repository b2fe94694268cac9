// Numeric helpers shared by the op tests: f16 data on the host (bits, the values they hold, one
// rounding), raw bytes of host vectors, and double references: linear products with the error
// bound of f32 dot products, row norms, rotary embeddings.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <utility>
#include <vector>

#include "graph/attr.h"
#include "graph/storage.h"
#include "runtime_test_util.h"

namespace wgx::runtime::testing {

// The f16 bound of kernels that compute in f32 and round once: within an f16 ulp (rel 2^-10,
// twice the rounding error) of the exact value, or 1e-4 where f16 is subnormal.
constexpr double kF16Abs = 1e-4;
constexpr double kF16Rel = 1.0 / 1024;

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
// What the one-row q4 gemv's int8 staging (quant_gemv_x8) makes of a row of x, in double: each
// 32-value chunk as round(x * 127 / max) (f32 arithmetic, ties to even) times max / 127 (the f32
// dx).
inline std::vector<double> int8_rounded(const std::vector<float>& x) {
  std::vector<double> r(x.size());
  for (size_t b = 0; b < x.size(); b += 32) {
    float amax = 0;
    for (size_t i = b; i < b + 32; ++i) amax = std::max(amax, std::abs(x[i]));
    const float inv = amax > 0 ? 127.f / amax : 0.f, dx = amax / 127.f;
    for (size_t i = b; i < b + 32; ++i) r[i] = std::clamp(std::nearbyint(x[i] * inv), -127.f, 127.f) * double(dx);
  }
  return r;
}

// sum |x w| + |bias|: the magnitude within_dot_bound takes.
struct DotReference {
  std::vector<double> values, magnitude;
};

// x [m, k] rounded as int8_rounded rounds it, times w [n, k]^T, + bias, in double (`ref`), and
// per element how far a GPU's rounding may move it (`slack`): the kernels take 127 / max with a
// division WGSL lets be 2.5 ulp off, so a value whose x * 127 / max lies within a few ulps of a
// half-integer may round either way, and each such value adds its step times |w| to the slack of
// the products it enters.
struct Int8Dots {
  DotReference ref;
  std::vector<double> slack;
};
inline Int8Dots int8_rounded_dots(const std::vector<float>& x, int64_t m, int64_t k, const std::vector<float>& w,
                                  int64_t n, const std::vector<float>& bias) {
  const std::vector<double> xr = int8_rounded(x);
  std::vector<double> tie(x.size(), 0);
  for (size_t b = 0; b < x.size(); b += 32) {
    float amax = 0;
    for (size_t i = b; i < b + 32; ++i) amax = std::max(amax, std::abs(x[i]));
    if (amax == 0) continue;
    for (size_t i = b; i < b + 32; ++i) {
      const double t = std::abs(double(x[i]) * 127.0 / amax);
      if (std::abs(t - std::floor(t) - 0.5) < 8 * t * std::numeric_limits<float>::epsilon()) tie[i] = amax / 127.0;
    }
  }
  Int8Dots r;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = bias.empty() ? 0 : bias[j], mag = bias.empty() ? 0 : std::abs(bias[j]), slack = 0;
      for (int64_t t = 0; t < k; ++t) {
        const double p = xr[i * k + t] * w[j * k + t];
        s += p;
        mag += std::abs(p);
        slack += tie[i * k + t] * std::abs(w[j * k + t]);
      }
      r.ref.values.push_back(s);
      r.ref.magnitude.push_back(mag);
      r.slack.push_back(slack);
    }
  }
  return r;
}

// got with each element moved toward want by at most its slack (what within_bound then checks
// is the rest).
inline std::vector<float> less_slack(const std::vector<float>& got, const Int8Dots& want) {
  std::vector<float> r = got;
  for (size_t i = 0; i < r.size() && i < want.slack.size(); ++i) {
    const double d = double(got[i]) - want.ref.values[i];
    r[i] = static_cast<float>(got[i] - std::clamp(d, -want.slack[i], want.slack[i]));
  }
  return r;
}
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

// rms_norm (center false) or layer_norm over rows of n, with optional weight and bias.
inline std::vector<double> norm_ref(const std::vector<float>& x, size_t n, bool center, double eps,
                                    const std::vector<float>& weight, const std::vector<float>& bias) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r * n < x.size(); ++r) {
    const float* row = x.data() + r * n;
    double mean = 0, sq = 0;
    if (center) {
      for (size_t c = 0; c < n; ++c) mean += row[c];
      mean /= static_cast<double>(n);
    }
    for (size_t c = 0; c < n; ++c) sq += (row[c] - mean) * (row[c] - mean);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
    for (size_t c = 0; c < n; ++c) {
      y[r * n + c] = (row[c] - mean) * inv * (weight.empty() ? 1.0 : weight[c]) + (bias.empty() ? 0.0 : bias[c]);
    }
  }
  return y;
}

// Rotary embeddings in double, as Hugging Face computes them. The scaling parameters default to
// Llama 3.2's rope_scaling; they apply when `llama3`.
struct RopeReference {
  double theta = 10000;
  bool interleaved = false;
  bool llama3 = false;
  double factor = 32, low_freq_factor = 1, high_freq_factor = 4;
  int64_t original_max_position = 8192;

  // The attributes of a rope (or rope_update_cache) node that computes this.
  graph::Attrs attrs() const {
    return {{"theta", theta},
            {"layout", interleaved ? "interleaved" : "rotate_half"},
            {"scaling", llama3 ? "llama3" : "none"},
            {"factor", factor},
            {"low_freq_factor", low_freq_factor},
            {"high_freq_factor", high_freq_factor},
            {"original_max_position", original_max_position}};
  }

  // inv_freq as Hugging Face's _compute_llama3_parameters (or the default rope) gives it.
  std::vector<double> inv_freq(int64_t dim) const {
    std::vector<double> f(static_cast<size_t>(dim / 2));
    const auto original = static_cast<double>(original_max_position);
    const double low_wavelen = original / low_freq_factor, high_wavelen = original / high_freq_factor;
    for (size_t i = 0; i < f.size(); ++i) {
      const double base = 1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(dim));
      const double wavelen = 2 * std::numbers::pi / base;
      if (!llama3 || wavelen < high_wavelen) {
        f[i] = base;
      } else if (wavelen > low_wavelen) {
        f[i] = base / factor;
      } else {
        const double smooth = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
        f[i] = (1 - smooth) * base / factor + smooth * base;
      }
    }
    return f;
  }

  // The two channels of a row that frequency i rotates.
  std::pair<size_t, size_t> channels(size_t i, int64_t dim) const {
    return interleaved ? std::pair{2 * i, 2 * i + 1} : std::pair{i, i + static_cast<size_t>(dim) / 2};
  }

  // x [..., S, heads, dim] as rows of dim channels, rotated: row r is token (r / heads) % seq at
  // position pos0 + that token. Returned in x's element type.
  template <typename T>
  std::vector<T> rotate(const std::vector<T>& x, int64_t seq, int64_t heads, int64_t dim, int64_t pos0) const {
    const std::vector<double> f = inv_freq(dim);
    const size_t d = static_cast<size_t>(dim);
    std::vector<T> out(x.size());
    for (size_t row = 0; row < x.size() / d; ++row) {
      const auto pos = static_cast<double>(pos0 + static_cast<int64_t>(row / static_cast<size_t>(heads)) % seq);
      for (size_t i = 0; i < d / 2; ++i) {
        const size_t ia = row * d + channels(i, dim).first, ib = row * d + channels(i, dim).second;
        const double c = std::cos(pos * f[i]), s = std::sin(pos * f[i]), a = x[ia], b = x[ib];
        out[ia] = static_cast<T>(a * c - b * s);
        out[ib] = static_cast<T>(b * c + a * s);
      }
    }
    return out;
  }
};

}  // namespace wgx::runtime::testing
