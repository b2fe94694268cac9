// Unary ops on integers and bools, exact: i32 neg/abs (wrapping at -2^31 like PyTorch) and clamp
// with float bounds, i64 (run as i32), u8 abs/clamp and logical_not, with odd byte tails.
#include <algorithm>
#include <climits>

#include "graph/builder.h"
#include "runtime/program.h"
#include "runtime_test_util.h"
#include "unary_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::from_bytes;
using testing::shared_context;

TEST(UnaryInteger, I32NegAbsClampAreExact) {
  GraphBuilder b;
  auto x = b.input("x", DType::i32, {37});
  b.output("neg", b.op1("neg", {x}));
  b.output("abs", b.op1("abs", {x}));
  // Integer bounds round inward: -2.5 -> -2, 7.5 -> 7.
  b.output("clamp", b.op1("clamp", {x}, {{"min", -2.5}, {"max", 7.5}}));
  b.output("low", b.op1("clamp", {x}, {{"min", 1e12}}));  // saturates to INT_MAX
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<int32_t> v(37);
  for (int i = 0; i < 37; ++i) v[i] = (i - 18) * (i % 3 == 0 ? 104729 : 1);
  v[0] = INT_MIN;
  v[1] = INT_MAX;
  prog.set_input<int32_t>("x", v, {37});
  prog.execute();
  const auto neg = from_bytes<int32_t>(prog.read_storage("neg"), 37), abs = from_bytes<int32_t>(prog.read_storage("abs"), 37),
             clamp = from_bytes<int32_t>(prog.read_storage("clamp"), 37), low = from_bytes<int32_t>(prog.read_storage("low"), 37);
  for (size_t i = 0; i < 37; ++i) {
    const int64_t x64 = v[i];
    EXPECT_EQ(neg[i], static_cast<int32_t>(static_cast<uint32_t>(-x64))) << i;  // two's complement wrap
    EXPECT_EQ(abs[i], static_cast<int32_t>(static_cast<uint32_t>(x64 < 0 ? -x64 : x64))) << i;
    EXPECT_EQ(clamp[i], std::clamp(v[i], -2, 7)) << i;
    EXPECT_EQ(low[i], INT_MAX) << i;
  }
  for (const RouteChoice& r : prog.routes()) EXPECT_EQ(r.route, "unary") << r.label;
}

TEST(UnaryInteger, I64RunsAsI32) {
  GraphBuilder b;
  auto x = b.input("x", DType::i64, {11});
  b.output("neg", b.op1("neg", {x}));
  b.output("clamp", b.op1("clamp", {x}, {{"max", 3.0}}));
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<int64_t> v(11);
  for (int i = 0; i < 11; ++i) v[i] = (i - 5) * 1000003;
  prog.set_input<int64_t>("x", v, {11});
  prog.execute();
  const auto neg = from_bytes<int32_t>(prog.read_storage("neg"), 11), clamp = from_bytes<int32_t>(prog.read_storage("clamp"), 11);
  for (size_t i = 0; i < 11; ++i) {
    EXPECT_EQ(neg[i], -v[i]) << i;
    EXPECT_EQ(clamp[i], std::min<int64_t>(v[i], 3)) << i;
  }
}

TEST(UnaryInteger, U8AbsClampAndLogicalNotWriteWholeWords) {
  GraphBuilder b;
  auto x = b.input("x", DType::u8, {3, 37});
  auto m = b.input("m", DType::boolean, {3, 37});
  b.output("abs", b.op1("abs", {x}));
  b.output("clamp", b.op1("clamp", {x}, {{"min", 10.5}, {"max", 200.0}}));
  b.output("not", b.op1("logical_not", {m}));
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<uint8_t> v(111), mv(111);
  for (size_t i = 0; i < 111; ++i) {
    v[i] = static_cast<uint8_t>(i * 37 + 5);
    mv[i] = (i * 7) % 3 == 0;
  }
  prog.set_input<uint8_t>("x", v, {3, 37});
  prog.set_input<uint8_t>("m", mv, {3, 37});
  prog.execute();
  const auto abs = prog.read_storage("abs"), clamp = prog.read_storage("clamp"), lnot = prog.read_storage("not");
  ASSERT_EQ(abs.size(), 112u);  // 111 bytes in whole words
  for (size_t i = 0; i < 111; ++i) {
    EXPECT_EQ(abs[i], v[i]) << i;
    EXPECT_EQ(clamp[i], std::clamp<uint8_t>(v[i], 11, 200)) << i;
    EXPECT_EQ(lnot[i], mv[i] ? 0 : 1) << i;
  }
  EXPECT_EQ(abs[111], 0);
  EXPECT_EQ(clamp[111], 0);
  EXPECT_EQ(lnot[111], 0) << "tail byte";
  for (const RouteChoice& r : prog.routes()) EXPECT_EQ(r.route, "unary") << r.label;
}

}  // namespace
}  // namespace wgx::runtime
