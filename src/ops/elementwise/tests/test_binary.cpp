// Binary elementwise ops against CPU references: NumPy broadcasting at prime sizes, every
// storage dtype (f32, packed f16, i32, byte bools with odd tails) and scalar operands.
#include <functional>

#include "graph/builder.h"
#include "graph/storage.h"
#include "runtime/program.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close;
using testing::random_floats;
using testing::shared_context;

// Reference broadcasting: element i of `out` reads these indices of a [.., ..] input.
std::vector<size_t> broadcast_index(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  std::vector<size_t> idx;
  size_t n = 1;
  for (int64_t d : out) n *= static_cast<size_t>(d);
  for (size_t i = 0; i < n; ++i) {
    size_t rem = i, at = 0, stride = 1;
    for (size_t k = 0; k < out.size(); ++k) {
      const size_t d = out.size() - 1 - k;
      const size_t c = rem % static_cast<size_t>(out[d]);
      rem /= static_cast<size_t>(out[d]);
      if (k < in.size()) {
        const size_t di = in.size() - 1 - k;
        if (in[di] != 1) at += c * stride;
        stride *= static_cast<size_t>(in[di]);
      }
    }
    idx.push_back(at);
  }
  return idx;
}

struct FloatOp {
  const char* op;
  std::function<float(float, float)> ref;
};

class BinaryFloat : public ::testing::TestWithParam<FloatOp> {};

TEST_P(BinaryFloat, BroadcastsAtPrimeSizesInF32) {
  const FloatOp& p = GetParam();
  const std::vector<int64_t> sa{3, 37, 11}, sb{37, 1}, so{3, 37, 11};
  GraphBuilder b;
  auto a = b.input("a", DType::f32, {3, 37, 11});
  auto bb = b.input("b", DType::f32, {37, 1});
  b.output("y", b.op1(p.op, {a, bb}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto va = random_floats(3 * 37 * 11, 1, 0.5f, 2.f), vb = random_floats(37, 2, 0.5f, 2.f);
  prog.set_input<float>("a", va, sa);
  prog.set_input<float>("b", vb, sb);
  prog.execute();
  const auto ia = broadcast_index(sa, so), ib = broadcast_index(sb, so);
  std::vector<float> want(ia.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = p.ref(va[ia[i]], vb[ib[i]]);
  EXPECT_TRUE(close(prog.read_f32("y"), want));
  EXPECT_EQ(prog.routes().at(0).route, "binary");
}

INSTANTIATE_TEST_SUITE_P(
    Ops, BinaryFloat,
    ::testing::Values(FloatOp{"add", [](float x, float y) { return x + y; }},
                      FloatOp{"sub", [](float x, float y) { return x - y; }},
                      FloatOp{"mul", [](float x, float y) { return x * y; }},
                      FloatOp{"div", [](float x, float y) { return x / y; }},
                      FloatOp{"pow", [](float x, float y) { return std::pow(x, y); }},
                      FloatOp{"maximum", [](float x, float y) { return std::max(x, y); }},
                      FloatOp{"minimum", [](float x, float y) { return std::min(x, y); }}),
    [](const auto& tp) { return std::string(tp.param.op); });

TEST(Binary, F16StorageRoundsOnceFromF32) {
  GraphBuilder b;
  auto a = b.input("a", DType::f16, {113});
  auto c = b.input("c", DType::f16, {113});
  b.output("y", b.op1("mul", {a, c}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto va = random_floats(113, 3), vc = random_floats(113, 4);
  std::vector<uint16_t> ha(113), hc(113);
  std::vector<float> want(113);
  for (size_t i = 0; i < 113; ++i) {
    ha[i] = graph::f32_to_f16(va[i]);
    hc[i] = graph::f32_to_f16(vc[i]);
    want[i] = graph::f16_to_f32(graph::f32_to_f16(graph::f16_to_f32(ha[i]) * graph::f16_to_f32(hc[i])));
  }
  prog.set_input<uint16_t>("a", ha, {113});
  prog.set_input<uint16_t>("c", hc, {113});
  prog.execute();
  // One f16 rounding of the f32 product: within half an f16 ulp (rel 2^-11) of the reference.
  EXPECT_TRUE(close(prog.read_f32("y"), want, 1e-7, 1.0 / 1024));
}

TEST(Binary, IntegerArithmeticIsExact) {
  GraphBuilder b;
  auto a = b.input("a", DType::i32, {37});
  auto c = b.input("c", DType::i32, {37});
  b.output("sum", b.op1("add", {a, c}));
  b.output("max", b.op1("maximum", {a, c}));
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<int32_t> va(37), vc(37);
  for (int i = 0; i < 37; ++i) {
    va[i] = i * 7919 - 100000;
    vc[i] = (i % 5) + 1;
  }
  prog.set_input<int32_t>("a", va, {37});
  prog.set_input<int32_t>("c", vc, {37});
  prog.execute();
  const auto sum = prog.read_f32("sum"), mx = prog.read_f32("max");
  for (int i = 0; i < 37; ++i) {
    EXPECT_EQ(sum[i], static_cast<float>(va[i] + vc[i])) << i;
    EXPECT_EQ(mx[i], static_cast<float>(std::max(va[i], vc[i]))) << i;
  }
}

TEST(Binary, ComparisonsAndLogicWriteByteBoolsWithOddTails) {
  GraphBuilder b;
  auto a = b.input("a", DType::f32, {3, 43});
  auto c = b.input("c", DType::f32, {43});
  auto lt = b.op1("lt", {a, c});
  auto ge = b.op1("ge", {a, c});
  b.output("lt", lt);
  b.output("xor", b.op1("logical_xor", {lt, ge}));  // always true
  b.output("and", b.op1("logical_and", {lt, ge}));  // always false
  Program prog(shared_context(), b.build(), b.weights());
  const auto va = random_floats(129, 5), vc = random_floats(43, 6);
  prog.set_input<float>("a", va, {3, 43});
  prog.set_input<float>("c", vc, {43});
  prog.execute();
  const auto got = prog.read_storage("lt");
  ASSERT_EQ(got.size(), 132u);  // 129 bytes in whole words
  for (size_t i = 0; i < 129; ++i) EXPECT_EQ(got[i], va[i] < vc[i % 43] ? 1 : 0) << i;
  for (size_t i = 129; i < 132; ++i) EXPECT_EQ(got[i], 0) << "tail byte " << i;
  EXPECT_EQ(prog.read_f32("xor"), std::vector<float>(129, 1.f));
  EXPECT_EQ(prog.read_f32("and"), std::vector<float>(129, 0.f));
}

TEST(Binary, ScalarOperandsBroadcast) {
  GraphBuilder b;
  auto a = b.input("a", DType::f32, {11, 13});
  b.output("y", b.op1("mul", {a, b.scalar(0.5)}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto va = random_floats(143, 7);
  prog.set_input<float>("a", va, {11, 13});
  prog.execute();
  std::vector<float> want(va);
  for (auto& x : want) x *= 0.5f;
  EXPECT_TRUE(close(prog.read_f32("y"), want));
}

TEST(Binary, BytesWrapAndCompareWithZeroTails) {
  GraphBuilder b;
  auto a = b.input("a", DType::u8, {37});
  auto c = b.input("c", DType::u8, {37});
  b.output("sum", b.op1("add", {a, c}));
  b.output("diff", b.op1("sub", {a, c}));
  b.output("lt", b.op1("lt", {a, c}));
  auto ba = b.op1("lt", {a, c});
  auto bc = b.op1("gt", {a, c});
  b.output("eq", b.op1("eq", {ba, bc}));  // equal only where a == c
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<uint8_t> va(37), vc(37);
  for (int i = 0; i < 37; ++i) {
    va[i] = static_cast<uint8_t>(i * 53 + 7);
    vc[i] = static_cast<uint8_t>(i % 3 == 0 ? va[i] : i * 31 + 200);
  }
  prog.set_input<uint8_t>("a", va, {37});
  prog.set_input<uint8_t>("c", vc, {37});
  prog.execute();
  const auto sum = prog.read_storage("sum"), diff = prog.read_storage("diff");
  const auto lt = prog.read_storage("lt"), eq = prog.read_storage("eq");
  ASSERT_EQ(sum.size(), 40u);
  for (int i = 0; i < 37; ++i) {
    EXPECT_EQ(sum[i], static_cast<uint8_t>(va[i] + vc[i])) << i;
    EXPECT_EQ(diff[i], static_cast<uint8_t>(va[i] - vc[i])) << i;
    EXPECT_EQ(lt[i], va[i] < vc[i] ? 1 : 0) << i;
    EXPECT_EQ(eq[i], va[i] == vc[i] ? 1 : 0) << i;
  }
  for (int i = 37; i < 40; ++i) EXPECT_EQ(sum[i], 0) << "tail byte " << i;
}

TEST(Binary, SymOperandsTakeTheirCurrentValue) {
  // positions + input_pos, as rotary embeddings and cache writes use it.
  GraphBuilder b;
  auto pos = b.sym("input_pos", 0, 1000);
  auto x = b.input("x", DType::i32, {7});
  b.output("y", b.op1("add", {x, b.sym_value(pos)}));
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<int32_t> vx(7);
  for (int i = 0; i < 7; ++i) vx[i] = i;
  prog.set_input<int32_t>("x", vx, {7});
  for (int64_t p : {0, 5, 999}) {
    prog.set_sym("input_pos", p);
    prog.execute();
    const auto got = prog.read_f32("y");
    for (int i = 0; i < 7; ++i) EXPECT_EQ(got[i], static_cast<float>(i + p)) << "input_pos " << p;
  }
}

}  // namespace
}  // namespace wgx::runtime
