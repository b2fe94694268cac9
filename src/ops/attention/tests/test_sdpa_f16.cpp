// The half-size KV cache (f16, packed two per word where the device has no shader-f16) and f16
// activations, on every route. Attention accumulates in f32 whatever the storage, so:
// - against a reference computed from the f16-rounded k and v, the f32 tolerance holds (the only
//   difference left is f32 arithmetic);
// - against the exact reference (k, v never rounded), each output element is within the bound
//   derived below from the data, and the largest error measured is printed.
// Bound: rounding to f16 moves an element x by at most u|x| + t, u = 2^-10, t = 2^-24 (one ulp,
// since WGSL leaves pack2x16float's rounding direction open; subnormals: one spacing). A score then
// moves by at most E = scale * max_j sum_d |q_d| (u|k_jd| + t), each probability by a factor within
// e^(+-2E), so |out' - out| <= (e^(2E) - 1) max_j |v'_jd| + max_j (u|v_jd| + t), plus the f32
// tolerance (1e-4) for the arithmetic.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "attention_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using testing::AttnConfig;
using testing::AttnReference;
using testing::Step;

constexpr double kU = 1.0 / 1024, kT = 1.0 / (1 << 24);

struct HalfCase {
  std::string name;
  int64_t hq, hkv, dim, max_new;
  RuntimeOptions options;
  std::string route;
};

const HalfCase kHalfCases[] = {
    {"K16Q16_D128_GQA", 8, 2, 128, 16, {}, "k16_streaming_q16"},
    {"K16Q32_D64_GQA", 8, 2, 64, 16, {{"sdpa_query_tile", "32"}}, "k16_streaming_q32"},
    {"Flash_D64_GQA", 8, 2, 64, 1, {}, "flash_decoding"},  // a single pass at these contexts
    {"Flash_D64_GQA_Split", 8, 2, 64, 1, {{"sdpa_decode_single_max", "0"}}, "flash_decoding"},
    {"Materialized_D80_MHA", 2, 2, 80, 16, {}, "materialized"},
};

AttnConfig half_config(const HalfCase& hc, DType io) {
  AttnConfig c;
  c.hq = hc.hq;
  c.hkv = hc.hkv;
  c.dim = hc.dim;
  c.max_new = hc.max_new;
  c.options = hc.options;
  c.kv = DType::f16;
  c.io = io;
  return c;
}

std::vector<int64_t> half_steps(const HalfCase& hc) {
  return hc.max_new == 1 ? std::vector<int64_t>(24, 1) : std::vector<int64_t>{13, 3, 3, 1, 1, 1};
}

// The bound above for every output element of a step; `exact` holds the unrounded history.
std::vector<double> f16_bound(const AttnConfig& c, const AttnReference& exact, const Step& st) {
  std::vector<double> bound(st.q.size());
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.dim));
  const int64_t group = c.hq / c.hkv;
  for (int64_t s = 0; s < st.seq; ++s)
    for (int64_t h = 0; h < c.hq; ++h) {
      const size_t qb = static_cast<size_t>((s * c.hq + h) * c.dim);
      const int64_t len = st.pos + s + 1;
      double e = 0;
      for (int64_t j = 0; j < len; ++j) {
        double sum = 0;
        for (int64_t d = 0; d < c.dim; ++d) sum += std::abs(st.q[qb + d]) * (kU * std::abs(exact.k(0, h / group, j, d)) + kT);
        e = std::max(e, scale * sum);
      }
      for (int64_t d = 0; d < c.dim; ++d) {
        double vmax = 0;
        for (int64_t j = 0; j < len; ++j) vmax = std::max(vmax, std::abs(exact.v(0, h / group, j, d)));
        bound[qb + d] = std::expm1(2 * e) * (vmax * (1 + kU) + kT) + (kU * vmax + kT) + 1e-4;
      }
    }
  return bound;
}

// gtest prints a failing case by name.
void PrintTo(const HalfCase& c, std::ostream* os) { *os << c.name; }

class HalfCache : public ::testing::TestWithParam<HalfCase> {};

TEST_P(HalfCache, WithinTheF32ToleranceOfTheRoundedReferenceAndTheBoundOfTheExactOne) {
  const HalfCase& hc = GetParam();
  const AttnConfig c = half_config(hc, DType::f32);
  graph::GraphBuilder b;
  Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
  ASSERT_EQ(testing::route_of(prog, "sdpa").route, hc.route);
  EXPECT_EQ(prog.memory().state, 2 * static_cast<uint64_t>(c.hkv * c.max_seq * c.dim) * 2);  // half of f32
  AttnReference rounded(c, true), exact(c, false);
  double worst = 0, worst_rounded = 0, worst_ratio = 0;
  for (const Step& st : testing::make_steps(c, half_steps(hc), 2000)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos));
    const std::vector<float> got = testing::run_step(prog, c, st);
    rounded.append(st);
    exact.append(st);
    const std::vector<float> want_rounded = rounded.attend(st), want = exact.attend(st);
    ASSERT_TRUE(testing::close(got, want_rounded));
    const std::vector<double> bound = f16_bound(c, exact, st);
    for (size_t i = 0; i < got.size(); ++i) {
      const double err = std::abs(double{got[i]} - want[i]);
      ASSERT_LE(err, bound[i]) << "element " << i;
      worst = std::max(worst, err);
      worst_ratio = std::max(worst_ratio, err / bound[i]);
      worst_rounded = std::max(worst_rounded, std::abs(double{got[i]} - want_rounded[i]));
    }
  }
  // The cache holds each k and v rounded once to the nearest f16.
  EXPECT_EQ(prog.read_state_f32("k_cache"), rounded.cache(false));
  EXPECT_EQ(prog.read_state_f32("v_cache"), rounded.cache(true));
  std::printf("  [f16 cache, %s] max |out - exact| %.3g (at most %.2f of its bound), max |out - f16-rounded ref| %.3g\n",
              hc.route.c_str(), worst, worst_ratio, worst_rounded);
}

// f16 q, k, v and output as well: the inputs are exact in f16, so the reference from them is exact,
// and the output's one rounding to f16 adds u|out| (u = 2^-10, either rounding direction).
TEST_P(HalfCache, HalfActivationsRoundTheOutputOnce) {
  const HalfCase& hc = GetParam();
  const AttnConfig c = half_config(hc, DType::f16);
  graph::GraphBuilder b;
  Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
  ASSERT_EQ(testing::route_of(prog, "sdpa").route, hc.route);
  AttnReference ref(c, true);
  for (const Step& st : testing::make_steps(c, half_steps(hc), 3000)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos));
    const std::vector<float> got = testing::run_step(prog, c, st);
    ref.append(st);
    const std::vector<float> want = ref.attend(st);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_LE(std::abs(double{got[i]} - want[i]), 1e-4 + kU * std::abs(want[i])) << "element " << i << ": got " << got[i]
                                                                                   << ", want " << want[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Routes, HalfCache, ::testing::ValuesIn(kHalfCases), [](const auto& tp) { return tp.param.name; });

}  // namespace
}  // namespace wgx::runtime
