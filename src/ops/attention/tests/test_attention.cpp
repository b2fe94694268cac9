// attention (non-causal: every query row over all T rows of k and v) on every route, against
// the double reference, at prime sizes: grouped and plain heads, f32 and f16 q/out and k/v, a T
// that is a SymInt and changes between runs, and T shorter than a tile. The f32 cases hold the
// project's f32 tolerance; with f16 storage the inputs are f16-exact and only the output's rounding
// is added (half an f16 ulp). Negative control: causal attention over the same rows
// (sdpa_with_kv_cache with input_pos 0, the same kernels) leaves the tolerance, so the cases would
// catch a mask that leaked into the non-causal route.
#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "attention_test_util.h"
#include "graph/error.h"

namespace wgx::runtime {
namespace {

using graph::DType;

struct Case {
  std::string name;
  int64_t batch, seq, hq, hkv, dim, t;
  DType io = DType::f32, kv = DType::f32;
  RuntimeOptions options;
  std::string route;
  bool sym_t = false;  // T a SymInt in [1, t]; runs at t and at a shorter T
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const Case kCases[] = {
    {"K16_D64_GQA", 2, 37, 4, 2, 64, 53, DType::f32, DType::f32, {}, "k16_streaming_q16"},
    {"K16_D64_Whisper", 1, 61, 3, 3, 64, 61, DType::f32, DType::f32, {}, "k16_streaming_q16"},
    {"K16_D128_ShortT", 1, 5, 2, 1, 128, 7, DType::f32, DType::f32, {}, "k16_streaming_q16"},
    {"K16_D64_OneRow", 1, 1, 3, 3, 64, 97, DType::f32, DType::f32, {}, "k16_streaming_q16"},  // split over T
    {"K16Q32_D64", 1, 41, 4, 4, 64, 29, DType::f32, DType::f32, {{"sdpa_query_tile", "32"}}, "k16_streaming_q32"},
    {"K16_D64_F16", 1, 23, 2, 2, 64, 31, DType::f16, DType::f16, {}, "k16_streaming_q16"},
    {"K16_D64_SymT", 1, 13, 2, 2, 64, 67, DType::f32, DType::f32, {}, "k16_streaming_q16", true},
    {"Materialized_D24", 2, 11, 6, 3, 24, 43, DType::f32, DType::f32, {}, "materialized"},
    {"Materialized_D80_F16", 1, 7, 2, 2, 80, 19, DType::f16, DType::f32, {}, "materialized"},
    {"Materialized_D24_SymT", 1, 3, 2, 1, 24, 37, DType::f32, DType::f32, {}, "materialized", true},
};

std::vector<float> exact_in(DType dtype, std::vector<float> x) {
  if (dtype == DType::f16) {
    for (float& e : x) e = testing::round_f16(e);
  }
  return x;
}

void feed(Program& prog, DType dtype, std::string_view name, const std::vector<float>& x, std::vector<int64_t> shape) {
  if (dtype == DType::f16) {
    prog.set_input<uint16_t>(name, testing::to_f16(x), std::move(shape));
  } else {
    prog.set_input<float>(name, x, std::move(shape));
  }
}

// out [B, S, Hq, D] in double: every row of q over all t rows of k and v ([B, Hkv, t, D]).
std::vector<float> reference(const Case& c, int64_t t, const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v) {
  std::vector<float> out(q.size());
  const int64_t group = c.hq / c.hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.dim));
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t s = 0; s < c.seq; ++s)
      for (int64_t h = 0; h < c.hq; ++h) {
        const size_t qb = static_cast<size_t>(((b * c.seq + s) * c.hq + h) * c.dim);
        auto at = [&](const std::vector<float>& x, int64_t j, int64_t d) {
          return double{x[static_cast<size_t>(((b * c.hkv + h / group) * t + j) * c.dim + d)]};
        };
        testing::attend_row(
            &q[qb], c.dim, t, scale, [&](int64_t j, int64_t d) { return at(k, j, d); },
            [&](int64_t j, int64_t d) { return at(v, j, d); }, &out[qb]);
      }
  return out;
}

struct Data {
  int64_t t;
  std::vector<float> q, k, v;
};

Data make_data(const Case& c, int64_t t, uint32_t seed) {
  return {t, exact_in(c.io, testing::random_floats(static_cast<size_t>(c.batch * c.seq * c.hq * c.dim), seed)),
          exact_in(c.kv, testing::random_floats(static_cast<size_t>(c.batch * c.hkv * t * c.dim), seed + 1)),
          exact_in(c.kv, testing::random_floats(static_cast<size_t>(c.batch * c.hkv * t * c.dim), seed + 2))};
}

std::vector<float> run(Program& prog, const Case& c, const Data& d) {
  feed(prog, c.io, "q", d.q, {c.batch, c.seq, c.hq, c.dim});
  feed(prog, c.kv, "k", d.k, {c.batch, c.hkv, d.t, c.dim});
  feed(prog, c.kv, "v", d.v, {c.batch, c.hkv, d.t, c.dim});
  prog.execute();
  return prog.read_f32("out");
}

// Half an f16 ulp of each output on top of the f32 tolerance where the output is f16.
::testing::AssertionResult matches(const Case& c, const std::vector<float>& got, const std::vector<float>& want) {
  return c.io == DType::f16 ? testing::close(got, want, 1e-3, 1e-3) : testing::close(got, want);
}

class Attention : public ::testing::TestWithParam<Case> {};

TEST_P(Attention, MatchesReference) {
  const Case& c = GetParam();
  graph::GraphBuilder b;
  const graph::Dim t = c.sym_t ? graph::Dim(b.sym("t", 1, c.t)) : graph::Dim(c.t);
  auto q = b.input("q", c.io, {c.batch, c.seq, c.hq, c.dim});
  auto k = b.input("k", c.kv, {c.batch, c.hkv, t, c.dim});
  auto v = b.input("v", c.kv, {c.batch, c.hkv, t, c.dim});
  b.output("out", b.op1("attention", {q, k, v}, {}, "attention"));
  Program prog(testing::shared_context(), b.build(), b.weights(), c.options);
  const RouteChoice& r = testing::route_of(prog, "attention");
  ASSERT_EQ(r.route, c.route) << testing::rejected_text(r);
  std::vector<int64_t> lengths{c.t};
  if (c.sym_t) lengths = {c.t, c.t / 3, 1, c.t};
  uint32_t seed = 100;
  for (int64_t len : lengths) {
    SCOPED_TRACE("T = " + std::to_string(len));
    const Data d = make_data(c, len, seed += 3);
    EXPECT_TRUE(matches(c, run(prog, c, d), reference(c, len, d.q, d.k, d.v)));
  }
}

INSTANTIATE_TEST_SUITE_P(Routes, Attention, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

// The control: the same rows through causal attention (query row s sees rows 0 .. s) leave the
// non-causal reference's tolerance on the same kernels, while the rows that see everything
// either way (s >= T - 1) still match it.
TEST(AttentionControl, CausalMaskDiverges) {
  for (const Case& c : {kCases[0], kCases[7]}) {
    SCOPED_TRACE(c.name);
    graph::GraphBuilder b;
    auto q = b.input("q", c.io, {c.batch, c.seq, c.hq, c.dim});
    auto k = b.input("k", c.kv, {c.batch, c.hkv, c.t, c.dim});
    auto v = b.input("v", c.kv, {c.batch, c.hkv, c.t, c.dim});
    b.output("out", b.op1("sdpa_with_kv_cache", {q, k, v, b.scalar_int(0)}, {}, "attention"));
    Program prog(testing::shared_context(), b.build(), b.weights(), c.options);
    ASSERT_EQ(testing::route_of(prog, "attention").route, c.route);
    const Data d = make_data(c, c.t, 7);
    const std::vector<float> got = run(prog, c, d);
    const std::vector<float> want = reference(c, c.t, d.q, d.k, d.v);
    EXPECT_FALSE(matches(c, got, want));
    // Row s of every (batch, head) sees s + 1 rows: the first rows are far off.
    const size_t row = static_cast<size_t>(c.hq * c.dim);
    const std::vector<float> first(got.begin(), got.begin() + row), first_want(want.begin(), want.begin() + row);
    EXPECT_FALSE(matches(c, first, first_want));
  }
}

TEST(AttentionSchema, RefusesMismatches) {
  using Dims = std::vector<graph::Dim>;
  auto build = [](Dims q, Dims k, Dims v) {
    graph::GraphBuilder b;
    const graph::ValueId qv = b.input("q", DType::f32, std::move(q));
    const graph::ValueId kv = b.input("k", DType::f32, std::move(k));
    const graph::ValueId vv = b.input("v", DType::f32, std::move(v));
    b.output("out", b.op1("attention", {qv, kv, vv}, {}, "attention"));
    return b.build();
  };
  EXPECT_NO_THROW(build({1, 5, 4, 8}, {1, 2, 9, 8}, {1, 2, 9, 8}));
  EXPECT_THROW(build({1, 5, 4, 8}, {1, 3, 9, 8}, {1, 3, 9, 8}), graph::GraphError);  // 4 heads over 3
  EXPECT_THROW(build({1, 5, 4, 8}, {1, 2, 9, 8}, {1, 2, 8, 8}), graph::GraphError);  // k and v differ
  EXPECT_THROW(build({1, 5, 4, 8}, {1, 2, 9, 16}, {1, 2, 9, 16}), graph::GraphError);  // head_dim
  EXPECT_THROW(build({2, 5, 4, 8}, {1, 2, 9, 8}, {1, 2, 9, 8}), graph::GraphError);  // batch
  EXPECT_THROW(build({1, 5, 4, 8}, {1, 2, 0, 8}, {1, 2, 0, 8}), graph::GraphError);  // no rows
}

}  // namespace
}  // namespace wgx::runtime
