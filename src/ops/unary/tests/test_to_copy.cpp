// to_copy between every pair of storage dtypes (f32, f16, i32, bool, u8) with PyTorch's semantics,
// at an odd size so that packed f16 and byte outputs have tails, which must be zero; and the bf16
// and i64 targets, which run as f32 and i32.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "graph/builder.h"
#include "graph/storage.h"
#include "runtime/program.h"
#include "runtime_test_util.h"
#include "unary_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close_special;
using testing::from_bytes;
using testing::round_f16;
using testing::shared_context;

constexpr size_t kN = 113;  // odd: one f16 and three byte tail elements in the last word
const DType kStorageTypes[] = {DType::f32, DType::f16, DType::i32, DType::boolean, DType::u8};

// Source values (exact in the source dtype) and their host bytes. Floats include fractions of both
// signs, values past 255 and below 0 (u8 wraps) and 70000 (past f16's range: inf).
std::vector<double> source_values(DType d) {
  std::mt19937 rng(static_cast<uint32_t>(d));
  std::vector<double> v;
  if (d == DType::boolean) {
    for (size_t i = 0; i < kN; ++i) v.push_back(rng() % 2);
    return v;
  }
  if (d == DType::u8) {
    for (size_t i = 0; i < kN; ++i) v.push_back(rng() % 256);
    return v;
  }
  if (d == DType::i32) {
    v = {0, 1, -1, 255, 256, -256, 300, 70000, -70000, 2047, -100000};
    std::uniform_int_distribution<int32_t> dist(-3000, 3000);
    while (v.size() < kN) v.push_back(dist(rng));
    return v;
  }
  v = {0.0, -0.0, 0.5, -0.5, 1.99, -1.99, 2.5, -2.5, 255.9, 256.0, 300.7, -1.2, -255.5, 70000, 1e-3};
  std::uniform_real_distribution<float> dist(-300.f, 300.f);
  while (v.size() < kN) v.push_back(dist(rng));
  std::vector<double> exact;  // as the source dtype holds them; 70000 is inf in f16: left out
  for (double x : v) {
    const double e = d == DType::f16 ? round_f16(x) : static_cast<float>(x);
    if (std::isfinite(e)) exact.push_back(e);
  }
  while (exact.size() < kN) exact.push_back(d == DType::f16 ? round_f16(dist(rng)) : dist(rng));
  return exact;
}

std::vector<uint8_t> host_bytes(DType d, const std::vector<double>& v) {
  std::vector<uint8_t> out;
  auto put = [&out](const auto& x) {
    const auto* p = reinterpret_cast<const uint8_t*>(&x);
    out.insert(out.end(), p, p + sizeof(x));
  };
  for (double x : v) {
    switch (d) {
      case DType::f32: put(static_cast<float>(x)); break;
      case DType::f16: put(graph::f32_to_f16(static_cast<float>(x))); break;
      case DType::i32: put(static_cast<int32_t>(x)); break;
      default: put(static_cast<uint8_t>(x)); break;  // bool, u8
    }
  }
  return out;
}

// PyTorch's conversion of one value: truncation toward zero into integers, != 0 into bool, and the
// low byte of the integer value into u8.
double convert(double x, DType to) {
  switch (to) {
    case DType::f32: return static_cast<float>(x);
    case DType::f16: return round_f16(x);
    case DType::i32: return std::trunc(x);
    case DType::boolean: return x != 0;
    default: return static_cast<uint8_t>(static_cast<int32_t>(std::trunc(x)));
  }
}

class ToCopy : public ::testing::TestWithParam<DType> {};

TEST_P(ToCopy, ConvertsToEveryStorageDtypeWithZeroTails) {
  const DType from = GetParam();
  GraphBuilder b;
  auto x = b.input("x", from, {static_cast<int64_t>(kN)});
  for (DType to : kStorageTypes) b.output(graph::dtype_name(to), b.op1("to_copy", {x}, {{"dtype", graph::dtype_name(to)}}));
  Program prog(shared_context(), b.build(), b.weights());
  const std::vector<double> v = source_values(from);
  const std::vector<uint8_t> in = host_bytes(from, v);
  prog.set_input(std::string_view("x"), in, {static_cast<int64_t>(kN)});
  prog.execute();
  for (DType to : kStorageTypes) {
    SCOPED_TRACE(std::string(graph::dtype_name(from)) + " -> " + graph::dtype_name(to));
    const std::vector<uint8_t> got = prog.read_storage(graph::dtype_name(to));
    const size_t bytes = kN * (to == DType::f16 ? 2 : to == DType::f32 || to == DType::i32 ? 4 : 1);
    ASSERT_EQ(got.size(), (bytes + 3) / 4 * 4);
    for (size_t i = bytes; i < got.size(); ++i) EXPECT_EQ(got[i], 0) << "tail byte " << i;
    std::vector<double> want;
    for (double e : v) want.push_back(convert(e, to));
    if (to == DType::f16) {
      // f32 -> f16 rounds once; WGSL lets it round either way: within one f16 ulp.
      std::vector<float> w(want.begin(), want.end());
      EXPECT_TRUE(close_special(prog.read_f32(graph::dtype_name(to)), w));
    } else {
      std::vector<uint8_t> exact = host_bytes(to, want);
      exact.resize(got.size(), 0);
      EXPECT_EQ(got, exact) << "(exact storage bytes)";
    }
  }
  for (const RouteChoice& r : prog.routes()) EXPECT_EQ(r.route, "to_copy") << r.label;
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ToCopy, ::testing::ValuesIn(kStorageTypes),
                         [](const auto& tp) { return std::string(graph::dtype_name(tp.param)); });

// NaN and infinities: NaN -> bool is true, and both survive f32 <-> f16. bf16 and i64 targets are
// stored as f32 (no bf16 rounding: bf16 runs as f32 everywhere) and i32.
TEST(ToCopySpecial, NonFiniteValuesAndWideTargets) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> v{nan, inf, -inf, 0.f, -0.f, 1.25f, -7.75f};
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {7});
  auto h = b.op1("to_copy", {x}, {{"dtype", "f16"}});
  b.output("bool", b.op1("to_copy", {x}, {{"dtype", "bool"}}));
  b.output("f16", h);
  b.output("back", b.op1("to_copy", {h}, {{"dtype", "f32"}}));
  b.output("bf16", b.op1("to_copy", {x}, {{"dtype", "bf16"}}));
  b.output("i64", b.op1("to_copy", {x}, {{"dtype", "i64"}}));
  Program prog(shared_context(), b.build(), b.weights());
  prog.set_input<float>("x", v, {7});
  prog.execute();
  EXPECT_EQ(prog.read_storage("bool"), (std::vector<uint8_t>{1, 1, 1, 0, 0, 1, 1, 0}));
  EXPECT_TRUE(close_special(prog.read_f32("f16"), v));
  EXPECT_TRUE(close_special(prog.read_f32("back"), v));
  EXPECT_TRUE(close_special(prog.read_f32("bf16"), v));
  const auto i64 = from_bytes<int32_t>(prog.read_storage("i64"), 7);  // non-finite: unspecified
  EXPECT_EQ(std::vector<int32_t>(i64.begin() + 3, i64.end()), (std::vector<int32_t>{0, 0, 1, -7}));
}

}  // namespace
}  // namespace wgx::runtime
