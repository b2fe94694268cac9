// rope against a double-precision reference: both layouts, with and without Llama 3.1 scaling,
// f32 and packed f16, at Llama 3.2 (head_dim 64, theta 5e5) and Qwen3 (head_dim 128, theta 1e6)
// geometry; S and input_pos change between executions of one program, up to position ~131K.
#include <cmath>
#include <numbers>

#include "graph/builder.h"
#include "runtime/program.h"
#include "runtime_test_util.h"
#include "transformer_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close;
using testing::random_floats;
using testing::shared_context;

// Llama 3.2's rope_scaling.
constexpr double kFactor = 32, kLow = 1, kHigh = 4;
constexpr int64_t kOriginal = 8192;

struct Geometry {
  const char* name;
  int64_t heads, dim;
  double theta;
};
void PrintTo(const Geometry& g, std::ostream* os) { *os << g.name; }

// inv_freq as Hugging Face's _compute_llama3_parameters gives it, in double.
std::vector<double> inv_freq(const Geometry& g, bool llama3) {
  std::vector<double> f(static_cast<size_t>(g.dim / 2));
  for (size_t i = 0; i < f.size(); ++i) {
    const double base = 1.0 / std::pow(g.theta, static_cast<double>(2 * i) / static_cast<double>(g.dim));
    const double wavelen = 2 * std::numbers::pi / base;
    const double low_wavelen = kOriginal / kLow, high_wavelen = kOriginal / kHigh;
    if (!llama3 || wavelen < high_wavelen) {
      f[i] = base;
    } else if (wavelen > low_wavelen) {
      f[i] = base / kFactor;
    } else {
      const double smooth = (kOriginal / wavelen - kLow) / (kHigh - kLow);
      f[i] = (1 - smooth) * base / kFactor + smooth * base;
    }
  }
  return f;
}

// x [B, S, H, D] rotated at positions pos0 + s.
std::vector<float> rope_ref(const std::vector<float>& x, int64_t seq, const Geometry& g,
                            bool interleaved, bool llama3, int64_t pos0) {
  const std::vector<double> f = inv_freq(g, llama3);
  const size_t d = static_cast<size_t>(g.dim), half = d / 2;
  std::vector<float> out(x.size());
  for (size_t row = 0; row < x.size() / d; ++row) {
    const auto pos = static_cast<double>(pos0 + static_cast<int64_t>(row / static_cast<size_t>(g.heads)) % seq);
    for (size_t i = 0; i < half; ++i) {
      const size_t ia = row * d + (interleaved ? 2 * i : i), ib = ia + (interleaved ? 1 : half);
      const double c = std::cos(pos * f[i]), s = std::sin(pos * f[i]), a = x[ia], b = x[ib];
      out[ia] = static_cast<float>(a * c - b * s);
      out[ib] = static_cast<float>(b * c + a * s);
    }
  }
  return out;
}

constexpr int64_t kBatch = 2, kMaxSeq = 7, kMaxPos = 131072;

// The four (layout, scaling) nodes over one input x [2, seq, H, D] at input_pos.
struct RopeProgram {
  std::unique_ptr<Program> prog;
  static constexpr const char* kNames[4] = {"half", "half_llama3", "inter", "inter_llama3"};

  RopeProgram(const Geometry& g, DType dtype) {
    GraphBuilder b;
    auto seq = b.sym("seq", 1, kMaxSeq);
    auto pos = b.sym_value(b.sym("input_pos", 0, kMaxPos));
    auto x = b.input("x", dtype, {kBatch, seq, g.heads, g.dim});
    for (int k = 0; k < 4; ++k) {
      graph::Attrs a{{"theta", g.theta},
                     {"layout", k < 2 ? "rotate_half" : "interleaved"},
                     {"scaling", k % 2 ? "llama3" : "none"},
                     {"factor", kFactor},
                     {"low_freq_factor", kLow},
                     {"high_freq_factor", kHigh},
                     {"original_max_position", kOriginal}};
      b.output(kNames[k], b.op1("rope", {x, pos}, a));
    }
    prog = std::make_unique<Program>(shared_context(), b.build(), b.weights());
  }
};

class Rope : public ::testing::TestWithParam<std::tuple<Geometry, DType>> {};

TEST_P(Rope, MatchesDoubleReferenceAsPositionsMove) {
  const auto& [g, dtype] = GetParam();
  const bool f16 = dtype == DType::f16;
  RopeProgram rp(g, dtype);
  Program& prog = *rp.prog;
  uint32_t seed = 100;
  // (S, input_pos): prefill, decode steps, and far positions where f32 angles would fail.
  for (auto [seq, pos] : std::vector<std::pair<int64_t, int64_t>>{
           {7, 0}, {1, 7}, {7, 8185}, {1, 16411}, {7, 29989}, {1, 131071}, {7, 131065}}) {
    const size_t n = static_cast<size_t>(kBatch * seq * g.heads * g.dim);
    std::vector<float> x = random_floats(n, seed++);
    if (f16) {
      x = testing::round_f16(x);
      prog.set_input<uint16_t>("x", testing::to_f16(x), {kBatch, seq, g.heads, g.dim});
    } else {
      prog.set_input<float>("x", x, {kBatch, seq, g.heads, g.dim});
    }
    prog.set_sym("seq", seq);
    prog.set_sym("input_pos", pos);
    prog.execute();
    for (int k = 0; k < 4; ++k) {
      const auto want = rope_ref(x, seq, g, k >= 2, k % 2 == 1, pos);
      const auto got = prog.read_f32(RopeProgram::kNames[k]);
      EXPECT_TRUE(f16 ? close(got, want, testing::kF16Abs, testing::kF16Rel) : close(got, want))
          << RopeProgram::kNames[k] << " S " << seq << " input_pos " << pos;
    }
  }
  for (const auto& r : prog.routes()) EXPECT_EQ(r.route, "rope") << r.op;
}

INSTANTIATE_TEST_SUITE_P(Geometries, Rope,
                         ::testing::Combine(::testing::Values(Geometry{"llama", 3, 64, 5e5},
                                                              Geometry{"qwen3", 2, 128, 1e6}),
                                            ::testing::Values(DType::f32, DType::f16)),
                         [](const auto& tp) {
                           return std::string(std::get<0>(tp.param).name) +
                                  (std::get<1>(tp.param) == DType::f16 ? "_f16" : "_f32");
                         });

// Negative control: a node whose input_pos is pinned to a constant matches the reference only at
// that position, so the tests above do see whether a kernel follows input_pos.
TEST(RopeControl, PinnedPositionDiffersLater) {
  const Geometry g{"llama", 3, 64, 5e5};
  GraphBuilder b;
  auto seq = b.sym("seq", 1, kMaxSeq);
  auto pos = b.sym("input_pos", 0, kMaxPos);
  auto x = b.input("x", DType::f32, {kBatch, seq, g.heads, g.dim});
  b.output("moving", b.op1("rope", {x, b.sym_value(pos)}, {{"theta", g.theta}}));
  b.output("pinned", b.op1("rope", {x, b.scalar_int(5)}, {{"theta", g.theta}}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto v = random_floats(static_cast<size_t>(kBatch * 7 * g.heads * g.dim), 7);
  prog.set_input<float>("x", v, {kBatch, 7, g.heads, g.dim});
  prog.set_sym("seq", 7);
  for (int64_t p : {5, 9000}) {
    prog.set_sym("input_pos", p);
    prog.execute();
    const auto want = rope_ref(v, 7, g, false, false, p);
    EXPECT_TRUE(close(prog.read_f32("moving"), want)) << p;
    EXPECT_EQ(static_cast<bool>(close(prog.read_f32("pinned"), want)), p == 5) << p;
  }
}

// input_pos may also be a rank-0 tensor computed in the graph: the kernel reads it on the device.
TEST(RopeControl, TensorPositionIsReadOnTheDevice) {
  const Geometry g{"qwen3", 2, 128, 1e6};
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {1, 3, g.heads, g.dim});
  auto pos = b.input("pos", DType::i32, {});
  b.output("y", b.op1("rope", {x, pos}, {{"theta", g.theta}, {"layout", "interleaved"}}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto v = random_floats(static_cast<size_t>(3 * g.heads * g.dim), 8);
  prog.set_input<float>("x", v, {1, 3, g.heads, g.dim});
  for (int32_t p : {0, 20011}) {
    prog.set_input<int32_t>("pos", std::vector<int32_t>{p}, {});
    prog.execute();
    EXPECT_TRUE(close(prog.read_f32("y"), rope_ref(v, 3, g, true, false, p))) << p;
  }
  EXPECT_EQ(prog.routes().at(0).route, "rope");
}

// rotate_half on packed f16 writes two frequencies' words at once: head_dim 6 has no route, and
// the build error says why.
TEST(RopeControl, F16RotateHalfNeedsHeadDimMultipleOf4) {
  GraphBuilder b;
  auto x = b.input("x", DType::f16, {1, 1, 1, 6});
  b.output("y", b.op1("rope", {x, b.scalar_int(0)}));
  try {
    Program prog(shared_context(), b.build(), b.weights());
    ADD_FAILURE() << "built";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("head_dim % 4 == 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wgx::runtime
