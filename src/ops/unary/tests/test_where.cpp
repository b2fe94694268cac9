// where(cond, a, b) against a CPU reference: NumPy broadcasting of all three inputs, every storage
// width (f32, packed f16, i32, bool and u8 bytes, with odd tails that must stay zero), Scalar
// operands, and a Sym operand whose new value must be used on the next execution.
#include <cstring>

#include "graph/builder.h"
#include "runtime/program.h"
#include "runtime_test_util.h"
#include "unary_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::from_bytes;
using testing::random_floats;
using testing::shared_context;

// The flat index that element `i` of an output of shape `out` reads from an input of shape `in`.
size_t source_index(size_t i, const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  size_t at = 0, stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const auto n_out = static_cast<size_t>(out[out.size() - 1 - k]);
    const size_t c = i % n_out;
    i /= n_out;
    if (k < in.size()) {
      const auto n_in = static_cast<size_t>(in[in.size() - 1 - k]);
      if (n_in != 1) at += c * stride;
      stride *= n_in;
    }
  }
  return at;
}

std::vector<uint8_t> random_bools(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (i * 2654435761u + seed) % 7 < 3;
  return v;
}

TEST(Where, BroadcastsAllThreeInputs) {
  const std::vector<int64_t> sc{3, 1, 11}, sa{37, 1}, sb{37, 11}, so{3, 37, 11};
  GraphBuilder b;
  auto y = b.op1("where", {b.input("c", DType::boolean, {3, 1, 11}), b.input("a", DType::f32, {37, 1}),
                           b.input("b", DType::f32, {37, 11})});
  b.output("y", y);
  Program prog(shared_context(), b.build(), b.weights());
  const auto vc = random_bools(33, 1);
  const auto va = random_floats(37, 2), vb = random_floats(37 * 11, 3);
  prog.set_input<uint8_t>("c", vc, sc);
  prog.set_input<float>("a", va, sa);
  prog.set_input<float>("b", vb, sb);
  prog.execute();
  std::vector<float> want(3 * 37 * 11);
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = vc[source_index(i, sc, so)] ? va[source_index(i, sa, so)] : vb[source_index(i, sb, so)];
  }
  EXPECT_EQ(prog.read_f32("y"), want);  // element bits are moved, not computed
  EXPECT_EQ(prog.routes().at(0).route, "where");
}

// f16, u8 and bool outputs with a Scalar operand, at an odd size (f16 and byte tails), and an i64
// output (run as i32) from two Scalars.
TEST(Where, ScalarOperandsAndPackedTails) {
  const std::vector<int64_t> shape{3, 37};
  GraphBuilder b;
  auto c = b.input("c", DType::boolean, {3, 37});
  b.output("f16", b.op1("where", {c, b.input("h", DType::f16, {37}), b.scalar(-1.5)}));
  b.output("u8", b.op1("where", {c, b.scalar_int(200), b.input("u", DType::u8, {3, 37})}));
  b.output("bool", b.op1("where", {c, b.input("m", DType::boolean, {3, 37}), b.scalar_bool(true)}));
  b.output("i64", b.op1("where", {c, b.scalar_int(7), b.scalar_int(-3)}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto vc = random_bools(111, 4), vm = random_bools(111, 5);
  const auto vh = testing::to_f16(random_floats(37, 6));
  std::vector<uint8_t> vu(111);
  for (size_t i = 0; i < 111; ++i) vu[i] = static_cast<uint8_t>(i * 13 + 1);
  prog.set_input<uint8_t>("c", vc, shape);
  prog.set_input<uint16_t>("h", vh, {37});
  prog.set_input<uint8_t>("u", vu, shape);
  prog.set_input<uint8_t>("m", vm, shape);
  prog.execute();
  const auto f16 = prog.read_storage("f16"), u8 = prog.read_storage("u8"), bl = prog.read_storage("bool");
  ASSERT_EQ(f16.size(), 224u);
  ASSERT_EQ(u8.size(), 112u);
  ASSERT_EQ(bl.size(), 112u);
  const auto halves = from_bytes<uint16_t>(f16, 112);
  const auto i64 = from_bytes<int32_t>(prog.read_storage("i64"), 111);
  for (size_t i = 0; i < 111; ++i) {
    EXPECT_EQ(halves[i], vc[i] ? vh[i % 37] : uint16_t{0xbe00}) << i;  // -1.5 in f16
    EXPECT_EQ(u8[i], vc[i] ? 200 : vu[i]) << i;
    EXPECT_EQ(bl[i], vc[i] ? vm[i] : 1) << i;
    EXPECT_EQ(i64[i], vc[i] ? 7 : -3) << i;
  }
  EXPECT_EQ(halves[111], 0) << "f16 tail";
  EXPECT_EQ(u8[111], 0) << "u8 tail";
  EXPECT_EQ(bl[111], 0) << "bool tail";
  for (const RouteChoice& r : prog.routes()) EXPECT_EQ(r.route, "where") << r.label;
}

// A Sym operand is read when the SymInt changes, not frozen at build time.
TEST(Where, SymOperandTakesItsCurrentValue) {
  GraphBuilder b;
  auto n = b.sym("n", 0, 1000);
  b.output("y", b.op1("where", {b.input("c", DType::boolean, {11}), b.input("a", DType::i32, {11}), b.sym_value(n)}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto vc = random_bools(11, 7);
  std::vector<int32_t> va(11);
  for (int i = 0; i < 11; ++i) va[i] = -i;
  prog.set_input<uint8_t>("c", vc, {11});
  prog.set_input<int32_t>("a", va, {11});
  for (int64_t value : {5, 42}) {
    prog.set_sym("n", value);
    prog.execute();
    const auto y = from_bytes<int32_t>(prog.read_storage("y"), 11);
    for (size_t i = 0; i < 11; ++i) EXPECT_EQ(y[i], vc[i] ? va[i] : value) << "n = " << value << ", element " << i;
  }
}

}  // namespace
}  // namespace wgx::runtime
