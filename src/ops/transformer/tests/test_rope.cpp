// rope against a double-precision reference: both layouts, with and without Llama 3.1 scaling,
// f32 and packed f16, at Llama 3.2 (head_dim 64, theta 5e5) and Qwen3 (head_dim 128, theta 1e6)
// geometry; S and input_pos change between executions of one program, up to position ~131K.
#include <cmath>

#include "graph/builder.h"
#include "runtime/program.h"
#include "numeric_test_util.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close;
using testing::random_floats;
using testing::shared_context;

struct Geometry {
  const char* name;
  int64_t heads, dim;
  double theta;
};
void PrintTo(const Geometry& g, std::ostream* os) { *os << g.name; }

// x [B, S, H, D] rotated at positions pos0 + s, in double (numeric_test_util.h).
std::vector<float> rope_ref(const std::vector<float>& x, int64_t seq, const Geometry& g, bool interleaved, bool llama3,
                            int64_t pos0) {
  return testing::RopeReference{.theta = g.theta, .interleaved = interleaved, .llama3 = llama3}.rotate(
      x, seq, g.heads, g.dim, pos0);
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
      const testing::RopeReference ref{.theta = g.theta, .interleaved = k >= 2, .llama3 = k % 2 == 1};
      b.output(kNames[k], b.op1("rope", {x, pos}, ref.attrs()));
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
