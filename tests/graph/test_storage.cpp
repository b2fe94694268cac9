// Storage dtypes and the conversions constants go through on load.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "graph/error.h"
#include "graph/storage.h"

namespace wgx::graph {
namespace {

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

template <typename T>
std::vector<T> values_of(const std::vector<uint8_t>& b) {
  std::vector<T> out(b.size() / sizeof(T));
  std::memcpy(out.data(), b.data(), b.size());
  return out;
}

TEST(GraphStorage, Rules) {
  EXPECT_EQ(storage_dtype(DType::bf16), DType::f32);
  EXPECT_EQ(storage_dtype(DType::bf16, {DType::f16}), DType::f16);
  EXPECT_EQ(storage_dtype(DType::i64), DType::i32);
  EXPECT_EQ(storage_dtype(DType::f16), DType::f16);
  EXPECT_EQ(storage_dtype(DType::q4gsw), DType::q4gsw);
  EXPECT_THROW(storage_dtype(DType::bf16, {DType::i32}), GraphError);
  EXPECT_TRUE(needs_conversion(DType::i64));
  EXPECT_FALSE(needs_conversion(DType::boolean));
  const TensorType t = storage_type({DType::bf16, {3, 5}, {}}, {DType::f16});
  EXPECT_EQ(t.dtype, DType::f16);
  EXPECT_EQ(t.shape, (Shape{3, 5}));
}

TEST(GraphStorage, F16Conversions) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);  // largest finite half
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(5.9604645e-08f), 0x0001);      // smallest subnormal
  EXPECT_EQ(f32_to_f16(2.0e-8f), 0x0000);             // below half of it
  EXPECT_EQ(f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);  // tie: to even
  EXPECT_EQ(f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);  // tie: to even (up)
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::nanf("")))));
  // Every finite half survives the round trip through f32.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    if ((bits & 0x7c00) == 0x7c00 && (bits & 0x3ff)) continue;  // NaN payloads
    ASSERT_EQ(f32_to_f16(f16_to_f32(bits)), bits) << std::hex << h;
  }
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xc040), -3.0f);
}

TEST(GraphStorage, ConvertsBf16) {
  const std::vector<uint16_t> bf = {0x3f80, 0xc040, 0x4049};  // 1, -3, 3.140625
  const auto as_f32 = values_of<float>(convert_for_storage("w", DType::bf16, bytes_of(bf)));
  EXPECT_EQ(as_f32, (std::vector<float>{1.0f, -3.0f, 3.140625f}));
  const auto as_f16 =
      values_of<uint16_t>(convert_for_storage("w", DType::bf16, bytes_of(bf), {DType::f16}));
  EXPECT_EQ(as_f16, (std::vector<uint16_t>{0x3c00, 0xc200, 0x4248}));
}

TEST(GraphStorage, NarrowsI64WithRangeCheck) {
  const std::vector<int64_t> ok = {0, -1, INT32_MAX, INT32_MIN, 128255};
  EXPECT_EQ(values_of<int32_t>(convert_for_storage("ids", DType::i64, bytes_of(ok))),
            (std::vector<int32_t>{0, -1, INT32_MAX, INT32_MIN, 128255}));
  const std::vector<int64_t> bad = {1, int64_t{1} << 40};
  try {
    convert_for_storage("rope.positions", DType::i64, bytes_of(bad));
    FAIL() << "expected a range error";
  } catch (const GraphError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rope.positions"), std::string::npos) << msg;
    EXPECT_NE(msg.find("element 1"), std::string::npos) << msg;
  }
  EXPECT_THROW(convert_for_storage("odd", DType::i64, std::vector<uint8_t>(12)), GraphError);
}

TEST(GraphStorage, PassesOtherTypesThrough) {
  const std::vector<uint8_t> raw = {1, 2, 3, 4};
  EXPECT_EQ(convert_for_storage("x", DType::f32, raw), raw);
  EXPECT_EQ(convert_for_storage("q", DType::q4gsw, raw), raw);
}

}  // namespace
}  // namespace wgx::graph
